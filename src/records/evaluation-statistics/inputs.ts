import { z } from 'zod';

/**
 * What the evaluation statistics are computed from: plain data that `mass eval` gathers from its
 * records. The unit of resampling everywhere is an episode pair, one (task, condition, replicate):
 * replicate i of every generation ran with the same sampling seed, so the judgments and grades of
 * one replicate belong together and are resampled together.
 */
const Label = z.string().min(1, 'must be a non-empty label');
const Count = z.number().int().nonnegative();

/**
 * One verdict of one judge on one pair of episodes, seen from the candidate: `win` means the judge
 * preferred the candidate's episode. Failed judgments are left out before (the caller counts them).
 */
export const JudgedPair = z.object({
  task: Label,
  condition: Label,
  replicate: Count,
  /** Generation label of the candidate, e.g. "L1". */
  candidate: Label,
  /** Generation label it is compared with, e.g. "L0". */
  baseline: Label,
  /** Who judged, e.g. "external:claude" or "self:L1". The oracle's preference is derived from grades, not passed here. */
  judge: Label,
  seed: z.number().int(),
  order: z.enum(['candidate-first', 'baseline-first']),
  outcome: z.enum(['win', 'loss', 'tie']),
});
export type JudgedPair = z.infer<typeof JudgedPair>;
export type PairOutcome = JudgedPair['outcome'];
export type JudgeOrder = JudgedPair['order'];

/** One evaluation episode with the task's withheld grader's grade and what its usage records say. */
export const GradedRollout = z.object({
  task: Label,
  condition: Label,
  replicate: Count,
  generation: Label,
  /** The oracle's grade; null when grading failed (the episode still counts for tokens and delegation). */
  grade: z.number().finite().nullable(),
  /** Completion tokens of the whole episode, sub-agents included. */
  outputTokens: Count,
  /** Calls of the `agent` tool. */
  delegations: Count,
  /** Sub-agent conversations started. */
  subagentThreads: Count,
});
export type GradedRollout = z.infer<typeof GradedRollout>;

/** A run the loop selected for training, with what the oracle and the integrity checks say about it. */
export const SelectedRun = z.object({
  generation: Label,
  task: Label,
  run: Label,
  /** The oracle's grade of this run; null when grading failed. */
  grade: z.number().finite().nullable(),
  /** Oracle grades of every graded run of the task's collection, this run included. */
  collectionGrades: z.array(z.number().finite()),
  /** Whether any integrity check flagged the run. */
  flagged: z.boolean(),
  /**
   * Text in the run's workspace that addresses the judge or imitates its formats: its spans and their characters;
   * null (or absent, in summaries written before it was counted) when the workspace was not scanned.
   */
  judgeDirected: z.object({ spans: Count, characters: Count }).nullable().optional(),
});
export type SelectedRun = z.infer<typeof SelectedRun>;

/**
 * One evaluator's verdict on one item (a pair of episodes or runs), from the first-named side's
 * view: what evaluator agreement is computed from. `item` must name the same pair, in the same
 * orientation, for every evaluator.
 */
export const EvaluatorVerdict = z.object({
  evaluator: Label,
  task: Label,
  item: Label,
  outcome: z.enum(['win', 'loss', 'tie']),
});
export type EvaluatorVerdict = z.infer<typeof EvaluatorVerdict>;

/** A named set of verdicts on which agreement is measured, e.g. a sample of a generation's tournament matches. */
export const AgreementSample = z.object({
  name: Label,
  verdicts: z.array(EvaluatorVerdict),
});
export type AgreementSample = z.infer<typeof AgreementSample>;
