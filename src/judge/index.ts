export {
  buildWorkspaceBundle,
  type BuildBundleOptions,
  type BundleBudget,
  type WorkspaceBundle,
} from './bundle.js';
export { shrinkToTokens, omittedTokensMarker, type Excerpt } from './excerpt.js';
export { locateWorkspace, type WorkspaceSource } from './workspace-source.js';
export {
  RUBRIC,
  DECISION_RULE,
  EVIDENCE_RULES,
  POINTS_RULE,
  TASK_AND_LENS,
  judgeSystemPrompt,
  judgeUserPrompt,
  renderRubric,
  repairPrompt,
} from './judge-prompt.js';
export {
  renderSharedFiles,
  shareFiles,
  workspaceNames,
  type SharedFiles,
  type SideNames,
} from './shared-files.js';
export { escapePromptTags } from './prompt-tags.js';
export { askedBeyondTask } from './delegation-ask.js';
export {
  DEFAULT_BUNDLE_BUDGET,
  DEFAULT_JUDGE_SAMPLING,
  DEFAULT_MAX_REPAIR_ATTEMPTS,
} from './judge-defaults.js';
export { judgePair, randomOrder, type JudgePairOptions, type JudgedWorkspace } from './pairwise-judge.js';
