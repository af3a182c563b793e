import type { ResolvedJudge } from '../tasks/judge-defaults.js';

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
 * what must be delivered, the lens how well it was done.
 */
export const TASK_AND_LENS =
  'The task text is the contract: what it asks for (its deliverables, their form, its constraints) decides whether a workspace did the job. Measure each workspace against it, not against its own claims, its length or its effort. The lens says what doing that job well looks like: use it to weigh the quality of what the task asks for. Something the lens values that the task does not ask for (an interval around an estimate the task asks for as a number, say) is no missing deliverable: its absence does not count against a workspace, but where a workspace provides it soundly, it counts for that workspace under numerical rigor. Work that neither the task asks for nor the lens values earns nothing.';

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
- Each workspace comes as a bundle prepared by the evaluation system: an automatic deliverables preflight, integrity checks of the task's protected files, a file listing, excerpts of the report, result files and code, and a record of how the work went. Long files are cut; a marker such as "[… 1,234 tokens omitted …]" shows where. Do not hold against a workspace what the bundle left out; judge what it shows.
- A file that is the same in both workspaces is shown once, in the <same-in-both> block before them; each bundle names it where it would have been. It belongs to both workspaces.
- The preflight and integrity checks are mechanical and reliable. A changed, replaced or missing protected file means the results were not obtained under the task's conditions: treat it as a serious failure, however good the numbers look.
- Test claims against the numbers: a report that contradicts its own result files, values that are not finite, or results the code could not have produced count against a workspace.
- How the work was organised (a team with delegations, or a single agent) is no merit in itself: records of the process count only as evidence for or against the results.
- The order in which the workspaces are shown carries no information.

Weigh these six points:
${renderRubric()}

Deciding: answer "A" or "B" for the workspace that better satisfies the task overall. Answer "tie" only when the two are genuinely comparable after weighing all six points, not to avoid a close call; when both fall short, prefer the one that comes closer to the task.

Writing the verdict: name the workspace ("Workspace A", "Workspace B" or "both") in every sentence, and cite file paths and numbers from the bundles. In "rationale", name the differences that decided it. In "against_A" and "against_B", list the shortcomings of each workspace, the most important first, at most five each: one sentence per point, naming that workspace, saying what it lacks or got wrong against the task, specific enough for its authors to fix. Something the other workspace did that this one did not is a point against this one. Leave a list empty when nothing counts against that workspace; praise belongs in the rationale, not in a list.

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
  /** Excerpts of the files identical in both workspaces, shown once (`shareIdenticalFiles`). */
  sameInBoth?: string;
}): string {
  const shared = options.sameInBoth?.trim()
    ? `<same-in-both>
${neutraliseTags(options.sameInBoth.trimEnd())}
</same-in-both>

`
    : '';
  return `<task>
${options.taskText.trimEnd()}
</task>

${shared}<workspace name="A">
${neutraliseTags(options.bundleA.trimEnd())}
</workspace>

<workspace name="B">
${neutraliseTags(options.bundleB.trimEnd())}
</workspace>

Compare Workspace A and Workspace B against the task on the six points, then end with the JSON object ${VERDICT_FORMAT}.`;
}

/** A workspace file cannot close its own block and open a fake one: its tags are escaped. */
function neutraliseTags(text: string): string {
  return text.replace(/<(\/?)(workspace|task|same-in-both)\b/gi, '&lt;$1$2');
}

/** Sent back after an unusable reply: what was wrong, and a request for the JSON alone. */
export function repairPrompt(error: string): string {
  return `Your reply could not be used as a verdict: ${error}. Keep the judgment you reached and reply with only the JSON object, with nothing before or after it:
${VERDICT_FORMAT}`;
}
