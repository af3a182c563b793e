import type { FileExcerpt } from '../judge/bundle-sections.js';
import { escapePromptTags } from '../judge/prompt-tags.js';
import { renderSharedFiles, shareFiles, type SharedFiles } from '../judge/shared-files.js';
import { designForm, type TeamDesign } from '../workflow/workflow.js';
import { renderExecutionMetadata } from './execution-metadata.js';
import { type ExecutionMetadata } from '../records/execution-metadata.js';
import type { PairwiseComparison } from '../records/optimizer-history.js';
import { judgeCriteriaSection } from './judge-criteria.js';
import { type JudgeCriteria } from '../records/optimizer-call.js';
import { nextMatchSection } from './next-match.js';
import { type NextMatch } from '../records/optimizer-call.js';
import { SYSTEM_PROMPT } from './optimizer-instructions.js';
import {
  answerRequest,
  changeBoundSection,
  designBlock,
  formNote,
  originalSection,
} from './prompt-designs.js';
import { checklistSection, historySection, previousBestSection } from './prompt-history.js';
import { teamBudgetsSection } from './team-budgets.js';
import { type TeamBudgets } from '../records/optimizer-call.js';

export { REPLY_FORMAT } from './optimizer-instructions.js';
export { CHANGE_MEASURE, designBlock } from './prompt-designs.js';

/** Everything the optimizer is shown for one proposal. */
export interface OptimizerInput {
  task: {
    id: string;
    /** The task as the team sees it (`renderTaskPrompt`). */
    prompt: string;
  };
  /** The design to improve: usually the latest candidate, or the champion. */
  current: { label: string; design: TeamDesign };
  /**
   * The champion so far and the judge's rationale for its promotion (empty when there is none): a design, the
   * current one included, or `null` for the bare-task reference run, which is champion until a design beats it.
   */
  previousBest?: { label: string; design: TeamDesign | null; rationale: string };
  /** The task's own v0 design: free text, a draft or a complete workflow. */
  original: TeamDesign;
  /** A short description of the current design's workspace (files, preflight, excerpts), written by the caller. */
  workspaceEvidence?: string;
  /** The file excerpts `workspaceEvidence` holds (its bundle's), so that a file both workspaces have is shown once. */
  workspaceExcerpts?: readonly FileExcerpt[];
  /** What the judge values: its lens, the task's focus and the rubric (`judgeCriteria`). */
  judge?: JudgeCriteria;
  /** Whom the next design is judged against, and what it takes to become the best. */
  nextMatch?: NextMatch;
  /**
   * A bounded excerpt of the workspace the next design is judged against, when that is not the current design's:
   * prepared as the judge's bundle is, within the optimizer's evidence budget.
   */
  opponentEvidence?: { label: string; text: string; tokens: number; excerpts?: readonly FileExcerpt[] };
  /** What a run of the team may use, as the run configures its episodes. */
  budgets?: TeamBudgets;
  /** How the current design's run went. */
  execution?: ExecutionMetadata;
  /** Every judged comparison so far, oldest first. */
  history: PairwiseComparison[];
}

export interface OptimizerPromptOptions {
  /** Comparisons shown in full, the most recent ones (default 12); the checklist still counts them all. */
  historyLimit?: number;
  /** The stabiliser's bound on the share of the design that may change (0–1), stated in the prompt. */
  maxChangeFraction?: number;
}

export interface OptimizerPrompt {
  system: string;
  user: string;
}

const DEFAULT_HISTORY_LIMIT = 12;

/** The sections of the prompt, in the order it shows them. */
type SectionKey =
  | 'task'
  | 'criteria'
  | 'budgets'
  | 'nextMatch'
  | 'current'
  | 'execution'
  | 'shared'
  | 'currentWorkspace'
  | 'opponentWorkspace'
  | 'best'
  | 'original'
  | 'history'
  | 'checklist'
  | 'changeBound'
  | 'answer';

/**
 * Where a section is, seen from another: `below, in “Comparison history”`, the quoted title being how the section's
 * heading begins. Every place the prompt points to is worded by this, from the order the sections are shown in.
 */
export type Locate = (to: SectionKey) => string;

export function buildOptimizerPrompt(
  input: OptimizerInput,
  options: OptimizerPromptOptions = {},
): OptimizerPrompt {
  const historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  const workspaces = optimizerWorkspaces(input);
  const opponent = workspaces.opponent;
  const titles: Partial<Record<SectionKey, string>> = {
    task: `Task (${input.task.id})`,
    ...(input.judge ? { criteria: 'What the judge values' } : {}),
    ...(input.budgets ? { budgets: 'What a run of the team may use' } : {}),
    ...(input.nextMatch ? { nextMatch: 'The next comparison' } : {}),
    current: `Current design (${input.current.label})`,
    execution: "How the current design's run went",
    ...(workspaces.shared ? { shared: 'Files in both workspaces' } : {}),
    currentWorkspace: `Workspace of the current design (${input.current.label})`,
    ...(opponent.section ? { opponentWorkspace: `Workspace of ${opponent.label}` } : {}),
    best: 'Best design so far',
    original: 'Original design (v0)',
    history: 'Comparison history',
    checklist: 'Recurring problems',
    ...(options.maxChangeFraction !== undefined && designForm(input.current.design) === 'structured'
      ? { changeBound: 'How much may change' }
      : {}),
    answer: 'Your answer',
  };
  const order = (Object.keys(titles) as SectionKey[]).sort(
    (left, right) => SECTION_ORDER.indexOf(left) - SECTION_ORDER.indexOf(right),
  );
  const locateFrom =
    (from: SectionKey): Locate =>
    (to) => {
      if (!order.includes(to)) throw new Error(`optimizer prompt: no section "${to}" to point to`);
      return `${order.indexOf(to) < order.indexOf(from) ? 'above' : 'below'}, in “${titles[to]!}”`;
    };
  const render: Record<SectionKey, (locate: Locate) => string> = {
    task: () => `# ${titles.task!}\n\n${escapePromptTags(input.task.prompt.trim())}`,
    criteria: () => judgeCriteriaSection(input.judge!),
    budgets: () => teamBudgetsSection(input.budgets!),
    nextMatch: (locate) =>
      nextMatchSection(input.nextMatch!, {
        kind: opponent.where,
        location:
          opponent.where === 'current'
            ? locate('currentWorkspace')
            : opponent.where === 'excerpt'
              ? locate('opponentWorkspace')
              : '',
      }),
    current: () =>
      `# ${titles.current!}\n\n${designBlock(input.current.design)}${formNote(input.current.design)}`,
    execution: () =>
      `# ${titles.execution!}\n\n${input.execution ? renderExecutionMetadata(input.execution) : 'No execution record was given.'}`,
    shared: () =>
      `# ${titles.shared!}\n\n${escapePromptTags(renderSharedFiles(workspaces.shared!, workspaceSideNames(input.current.label, opponent.label)))}`,
    currentWorkspace: () =>
      `# ${titles.currentWorkspace!}\n\n${escapePromptTags(workspaces.current?.trim() || 'None was given.')}`,
    opponentWorkspace: () => opponent.section!,
    best: (locate) => previousBestSection(input, historyLimit, locate),
    original: () => originalSection(input),
    history: (locate) => historySection(input.history, historyLimit, input.current.label, locate),
    checklist: () => checklistSection(input.history),
    changeBound: () => changeBoundSection(options.maxChangeFraction!),
    answer: () => `# ${titles.answer!}\n\n${answerRequest(input.current.label, input.current.design)}`,
  };
  const user = order.map((key) => render[key](locateFrom(key))).join('\n\n');
  return { system: SYSTEM_PROMPT, user };
}

const SECTION_ORDER: readonly SectionKey[] = [
  'task',
  'criteria',
  'budgets',
  'nextMatch',
  'current',
  'execution',
  'shared',
  'currentWorkspace',
  'opponentWorkspace',
  'best',
  'original',
  'history',
  'checklist',
  'changeBound',
  'answer',
];

/** The names of the two workspaces where the files they share are shown. */
function workspaceSideNames(current: string, opponent: string) {
  return {
    a: { short: current, long: `the workspace of ${current}` },
    b: { short: opponent, long: `the workspace of ${opponent}` },
  };
}

export interface OptimizerWorkspaces {
  /** The current design's workspace as shown: without the files shown once. */
  current: string | undefined;
  /** The files both workspaces have, shown once (`shareFiles`, the judge's rule); absent when there are none. */
  shared?: SharedFiles;
  opponent: {
    where: 'current' | 'excerpt' | 'none';
    label: string;
    /** The opponent's workspace as shown, and its section. */
    text?: string;
    section?: string;
  };
}

/** The two workspaces the optimizer is shown, with the files they share taken out of each and shown once. */
export function optimizerWorkspaces(input: OptimizerInput): OptimizerWorkspaces {
  const label = input.nextMatch?.opponent.label ?? '';
  const current = input.workspaceEvidence;
  if (input.nextMatch === undefined) return { current, opponent: { where: 'none', label } };
  if (label === input.current.label) return { current, opponent: { where: 'current', label } };
  const evidence = input.opponentEvidence;
  if (!evidence || evidence.label !== label || evidence.text.trim() === '') {
    return { current, opponent: { where: 'none', label } };
  }
  let opponentText = evidence.text;
  let shownCurrent = current;
  let shared: SharedFiles | undefined;
  if (current !== undefined && input.workspaceExcerpts && evidence.excerpts) {
    const found = shareFiles(
      { text: current, excerpts: input.workspaceExcerpts },
      { text: evidence.text, excerpts: evidence.excerpts },
      { notes: SHARED_FILE_NOTES },
    );
    if (found.files.length > 0) {
      shared = found;
      shownCurrent = found.bundleA;
      opponentText = found.bundleB;
    }
  }
  return {
    current: shownCurrent,
    ...(shared ? { shared } : {}),
    opponent: {
      where: 'excerpt',
      label,
      text: opponentText.trim(),
      section: `# Workspace of ${label}, which the next design is judged against\n\nAn excerpt, prepared as the judge's bundle is, shorter:\n\n${escapePromptTags(opponentText.trim())}`,
    },
  };
}

/**
 * The note each workspace keeps in place of a file shown once. Both workspaces come after the shared files, so the
 * note points up to them (the prompt-order test checks it).
 */
const SHARED_FILE_NOTES = {
  same: '(the same in both workspaces: shown once, above, in “Files in both workspaces”)',
  differing:
    '(nearly the same in both workspaces: shown once, above, in “Files in both workspaces”, with the lines that differ)',
};
