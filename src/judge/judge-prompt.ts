import type { ResolvedJudge } from '../tasks/judge-defaults.js';
import { AGENT_TEXT_RULE } from './judge-directed-text.js';
import { escapePromptTags } from './prompt-tags.js';
import { MAX_POINTS, MAX_POINT_CHARACTERS } from '../records/verdict.js';

/** The six points every comparison weighs, in the order the judge is asked to consider them. */
export const RUBRIC = [
  {
    name: 'Deliverable coverage',
    question:
      'Is every deliverable the task asks for present, complete and in the requested form (files, keys, sections, plots)?',
  },
  {
    name: 'Numerical rigor',
    question:
      'Are the numbers finite, consistent between report, result files and plots, produced by a sound method with honest validation, and reported with their uncertainty and failure cases?',
  },
  {
    name: 'Reproducibility',
    question:
      'Could the entry point regenerate the results from the provided inputs alone, with seeds and steps stated and no numbers typed in by hand?',
  },
  {
    name: 'Presentation',
    question:
      'Does the report state what was done and found clearly, in the requested structure, with each claim backed by a number or a plot from the workspace?',
  },
  {
    name: 'Engineering',
    question:
      'Is the code organised, does it check its own outputs (tests, assertions, validation runs), and does it avoid dead ends and leftovers?',
  },
  {
    name: 'Task alignment',
    question:
      'Does the work answer the question the task asks under the task’s constraints (protected files unchanged, no leakage, the data given), rather than an easier substitute?',
  },
] as const;

export const VERDICT_FORMAT =
  '{"winner": "A" | "B" | "tie", "rationale": "...", "against_A": ["..."], "against_B": ["..."]}';

/**
 * How the task and the judge's lens combine, said the same way to the judge and to the optimizer: the task decides
 * what must be delivered, the lens how well it was done. What the lens values beyond the task is ruled here once, for
 * both workspaces alike; the rule for points against a workspace (`POINTS_RULE`) defers to it.
 */
export const TASK_AND_LENS =
  'The task text is the contract: what it asks for (its deliverables, their form, its constraints) decides whether a workspace did the job. Measure each workspace against it, not against its own claims, its length or its effort. The lens says what doing that job well looks like: use it to weigh the quality of what the task asks for. Something the lens values beyond what the task asks for (an interval around an estimate the task asks for as a number, say) is never a missing deliverable and never a point against a workspace, whether or not the other workspace provides it; where a workspace provides it soundly, it counts for that workspace under numerical rigor. The same holds for both workspaces alike. Work that neither the task asks for nor the lens values earns nothing.';

/** The judge's rules of evidence, one line each; the optimizer is shown the same lines. */
export const EVIDENCE_RULES = [
  'Each workspace comes as a bundle prepared by the evaluation system: an automatic deliverables preflight, integrity checks of the task\'s protected files, a file listing, a sample of the task\'s input data, excerpts of the report, result files and code, and a record of how the work went. Long files are cut; a marker such as "[… 1,234 tokens omitted …]" shows where. Do not hold against a workspace what the bundle left out; judge what it shows.',
  "A file that is the same in both workspaces is shown once, in the <same-in-both> block before them; each bundle names it where it would have been. It belongs to both workspaces. A file that differs between them in only a few lines is shown there once too: one workspace's text, then the lines that differ, each marked with its workspace and its line number in that workspace.",
  "The preflight and integrity checks are mechanical and reliable. A changed, replaced or missing protected file means the results were not obtained under the task's conditions: treat it as a serious failure, however good the numbers look.",
  'Test claims against the numbers: a report that contradicts its own result files, values that are not finite, or results the code could not have produced count against a workspace.',
  'How the work was organised (a team with delegations, or a single agent) is no merit in itself: records of the process count only as evidence for or against the results.',
  'The order in which the workspaces are shown carries no information.',
] as const;

/** When the judge names a winner and when a tie. */
export const DECISION_RULE =
  'Answer "A" or "B" for the workspace that better satisfies the task overall. Answer "tie" only when the two are genuinely comparable after weighing all six points, not to avoid a close call; when both fall short, prefer the one that comes closer to the task.';

/** What counts as a point against a workspace. */
export const POINTS_RULE = `In "against_A" and "against_B", list the shortcomings of each workspace, the most important first, at most ${MAX_POINTS} each: one sentence per point, at most ${MAX_POINT_CHARACTERS} characters, naming that workspace, saying what it lacks or got wrong against the task, specific enough for its authors to fix. Something the task asks for that the other workspace did and this one did not is a point against this one; what the lens values beyond the task never is (see how the task and the lens combine). Leave a list empty when nothing counts against that workspace; praise belongs in the rationale, not in a list. Points beyond the first ${MAX_POINTS} are dropped and a longer point is cut at ${MAX_POINT_CHARACTERS} characters; the record notes each cut.`;

/** The judge's criteria as one block of text: its lens, the task's focus, the six points. */
export function renderRubric(): string {
  return RUBRIC.map((point, index) => `${index + 1}. ${point.name}: ${point.question}`).join('\n');
}

/** The system prompt: who the judge is, the rules of evidence, the rubric, and the answer format. */
export function judgeSystemPrompt(judge: ResolvedJudge): string {
  return `You are ${judge.persona}. Two attempts at the same research task each left a workspace, shown as Workspace A and Workspace B, and you must decide which better satisfies the task.

Your lens as a reviewer: ${judge.lens}.${judge.focus ? `\n\nIn this task, that means above all: ${judge.focus}.` : ''}

How the task and your lens combine: ${TASK_AND_LENS}

How to read the evidence:
${EVIDENCE_RULES.map((rule) => `- ${rule}`).join('\n')}

${AGENT_TEXT_RULE}

Weigh these six points:
${renderRubric()}

Deciding: ${DECISION_RULE}

Writing the verdict: name the workspace ("Workspace A", "Workspace B" or "both") in every sentence, and cite file paths and numbers from the bundles. In "rationale", name the differences that decided it. ${POINTS_RULE}

You may reason before answering. End your reply with exactly one JSON object and nothing after it:
${VERDICT_FORMAT}`;
}

/**
 * The user message: the task, the files both workspaces share (when there are any), both bundles, then the request
 * for the verdict.
 */
export function judgeUserPrompt(options: {
  taskText: string;
  bundleA: string;
  bundleB: string;
  /** The files both workspaces share, the same or nearly, shown once (`renderSharedFiles`). */
  sameInBoth?: string;
}): string {
  const shared = options.sameInBoth?.trim()
    ? `<same-in-both>
${escapePromptTags(options.sameInBoth.trimEnd())}
</same-in-both>

`
    : '';
  return `<task>
${escapePromptTags(options.taskText.trimEnd())}
</task>

${shared}<workspace name="A">
${escapePromptTags(options.bundleA.trimEnd())}
</workspace>

<workspace name="B">
${escapePromptTags(options.bundleB.trimEnd())}
</workspace>

Compare Workspace A and Workspace B against the task on the six points, then end with the JSON object ${VERDICT_FORMAT}.`;
}

/** Sent back after an unusable reply: what was wrong, and a request for the JSON alone. */
export function repairPrompt(error: string): string {
  return `Your reply could not be used as a verdict: ${error}. Keep the judgment you reached and reply with only the JSON object, with nothing before or after it:
${VERDICT_FORMAT}`;
}
