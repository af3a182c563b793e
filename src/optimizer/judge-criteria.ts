import { AGENT_TEXT_RULE } from '../judge/judge-directed-text.js';
import { DECISION_RULE, EVIDENCE_RULES, POINTS_RULE, RUBRIC, TASK_AND_LENS } from '../judge/judge-prompt.js';
import type { ResolvedJudge } from '../tasks/judge-defaults.js';
import type { JudgeCriteria } from '../records/optimizer-call.js';

/** The criteria of a task's judge (its resolved `judge:` section) with the rubric every judgment weighs. */
export function judgeCriteria(judge: Pick<ResolvedJudge, 'lens' | 'focus'>): JudgeCriteria {
  return {
    lens: judge.lens,
    focus: judge.focus,
    rubric: RUBRIC.map((point) => ({ name: point.name, question: point.question })),
  };
}

/**
 * The judge's criteria and its rules of evidence, decision and points, in the judge's own words (the same constants
 * its prompt is built from), so that the optimizer knows what a tie takes, what counts as a point against a
 * workspace, and that what a bundle cuts is not held against it.
 */
export function judgeCriteriaSection(criteria: JudgeCriteria): string {
  const lines = [
    '# What the judge values',
    '',
    "The judge is told the following, word for word, and weighs each workspace by it. It sees the task and, of each workspace, a bundle: a deliverables preflight, integrity checks of the task's protected files, the file list, a sample of the task's input data, excerpts of the report, result files and code, and a record of how the work went. How the work was organised is no merit in itself to it.",
    '',
    `Its lens: ${criteria.lens}.`,
  ];
  if (criteria.focus) lines.push('', `In this task, that means above all: ${criteria.focus}.`);
  lines.push(
    '',
    `How the task and its lens combine: ${TASK_AND_LENS}`,
    '',
    'How it reads the evidence:',
    ...EVIDENCE_RULES.map((rule) => `- ${rule}`),
    '',
    AGENT_TEXT_RULE,
    '',
    'The six points it weighs:',
    ...criteria.rubric.map((point, index) => `${index + 1}. ${point.name}: ${point.question}`),
    '',
    `Deciding: ${DECISION_RULE}`,
    '',
    `Its points against each workspace: ${POINTS_RULE}`,
  );
  return lines.join('\n');
}
