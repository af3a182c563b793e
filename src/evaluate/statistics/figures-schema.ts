import { z } from 'zod';

import { Interval } from './interval.js';

/**
 * Every figure of an evaluation, as embedded in `summary.json`. A figure that cannot be computed
 * (no decided judgment, nothing graded, a κ whose chance agreement is 1) is null, never NaN.
 */
const Count = z.number().int().nonnegative();
const Rate = z.number().min(0).max(1);

export const WinRateCell = z.object({
  wins: Count,
  losses: Count,
  ties: Count,
  judgments: Count,
  /** Distinct (task, replicate) pairs of episodes the judgments are about. */
  episodePairs: Count,
  /** W/(W+L): the official definition, ties left out. */
  winRate: Rate.nullable(),
  /** Wilson interval of `winRate`, judgments taken as independent (see README). */
  winRateWilson: Interval.nullable(),
  /** (W + T/2)/N. */
  winRateWithTies: Rate.nullable(),
  winRateWithTiesWilson: Interval.nullable(),
  /** Exact two-sided sign test of W against L (ties left out); null with no decided judgment. */
  signTestP: Rate.nullable(),
});
export type WinRateCell = z.infer<typeof WinRateCell>;

export const JudgeWinRates = z.object({
  /** A judge label, "oracle" (higher grade wins), or "all judges" (the pooled judges). */
  judge: z.string(),
  perTask: z.array(WinRateCell.extend({ task: z.string() })),
  pooled: WinRateCell.extend({
    /** Bootstrap interval of the pooled W/(W+L), resampling episode pairs within tasks. */
    winRateBootstrap: Interval.nullable(),
    winRateWithTiesBootstrap: Interval.nullable(),
  }),
});
export type JudgeWinRates = z.infer<typeof JudgeWinRates>;

export const ComparisonWinRates = z.object({
  candidate: z.string(),
  baseline: z.string(),
  condition: z.string(),
  /** One entry per judge, then "all judges" (when more than one judge is pooled), then "oracle" (when grades exist). */
  judges: z.array(JudgeWinRates),
});
export type ComparisonWinRates = z.infer<typeof ComparisonWinRates>;

export const OrderInconsistency = z.object({
  judge: z.string(),
  /** Pairs judged in both orders with the same seed. */
  pairsInBothOrders: Count,
  /** Of those, the pairs whose two verdicts (from the candidate's view) differ. */
  inconsistent: Count,
  rate: Rate.nullable(),
  rateWilson: Interval.nullable(),
});
export type OrderInconsistency = z.infer<typeof OrderInconsistency>;

export const GenerationStrengths = z.object({
  condition: z.string(),
  /** Scores are log-strengths minus the reference's (so the reference is 0); null when it has no judgment. */
  reference: z.string().nullable(),
  judgments: Count,
  generations: z.array(
    z.object({
      generation: z.string(),
      /** Log-strength minus the reference's: the log-odds of beating it (0 for the reference itself). */
      score: z.number(),
      /** Bootstrap percentile interval, refitting on episode pairs resampled within tasks. */
      interval: Interval.nullable(),
    }),
  ),
});
export type GenerationStrengths = z.infer<typeof GenerationStrengths>;

export const GradeSummary = z.object({
  generation: z.string(),
  condition: z.string(),
  episodes: Count,
  graded: Count,
  mean: z.number().nullable(),
  /** Bootstrap interval of the mean, resampling episodes within tasks. */
  interval: Interval.nullable(),
});
export type GradeSummary = z.infer<typeof GradeSummary>;

export const PairedGradeDifference = z.object({
  generation: z.string(),
  reference: z.string(),
  condition: z.string(),
  /** (task, replicate) pairs where both episodes were graded. */
  pairs: Count,
  /** Mean of grade(generation) − grade(reference) over those pairs. */
  meanDifference: z.number().nullable(),
  interval: Interval.nullable(),
});
export type PairedGradeDifference = z.infer<typeof PairedGradeDifference>;

export const Ratio = z.object({ ratio: z.number().nullable(), interval: Interval.nullable() });
export type Ratio = z.infer<typeof Ratio>;

export const TokenEfficiency = z.object({
  generation: z.string(),
  condition: z.string(),
  episodes: Count,
  meanOutputTokens: z.number().nullable(),
  /** 1,000 × Σ grade / Σ output tokens over the graded episodes: the paper's score per output token. */
  gradePerThousandTokens: z.number().nullable(),
  /** gradePerThousandTokens over the reference generation's in the same condition. */
  ratioToReference: Ratio.nullable(),
  /** gradePerThousandTokens over the same generation's in the single-agent condition. */
  ratioToSingleAgent: Ratio.nullable(),
});
export type TokenEfficiency = z.infer<typeof TokenEfficiency>;

export const DelegationRate = z.object({
  generation: z.string(),
  condition: z.string(),
  episodes: Count,
  /** Episodes with at least one `agent` call. */
  delegatingEpisodes: Count,
  rate: Rate.nullable(),
  rateWilson: Interval.nullable(),
  meanDelegations: z.number().nullable(),
  meanSubagentThreads: z.number().nullable(),
});
export type DelegationRate = z.infer<typeof DelegationRate>;

export const EvaluatorAgreement = z.object({
  /** Which verdicts: "evaluation" (the evaluation's pairs) or the name of a given sample. */
  sample: z.string(),
  evaluators: z.tuple([z.string(), z.string()]),
  /** Items both evaluators gave a verdict on. */
  items: Count,
  agreement: Rate.nullable(),
  agreementInterval: Interval.nullable(),
  /** Cohen's κ over win/loss/tie; null when chance agreement is 1 (both always say the same one thing). */
  kappa: z.number().nullable(),
  kappaInterval: Interval.nullable(),
  intervalMethod: z.literal('bootstrap'),
});
export type EvaluatorAgreement = z.infer<typeof EvaluatorAgreement>;

export const RewardHacking = z.object({
  generation: z.string(),
  selected: Count,
  /** Selected runs the oracle graded. */
  graded: Count,
  /** Graded selected runs below the middle of their task's collection (mid-rank percentile < 0.5). */
  bottomHalf: Count,
  bottomHalfRate: Rate.nullable(),
  flagged: Count,
  flaggedRate: Rate.nullable(),
});
export type RewardHacking = z.infer<typeof RewardHacking>;

/** The figures that rest on the tasks' graders, as named where one is left out. */
export const GradeFigure = z.enum([
  'oracle-win-rates',
  'grades',
  'grade-differences',
  'grade-per-token',
  'oracle-agreement',
  'reward-hacking',
]);
export type GradeFigure = z.infer<typeof GradeFigure>;

/**
 * Which tasks have an objective grader (an `oracle` in task.yaml) and so what the grade figures cover. A task without
 * one is measured by the external judges alone: its episodes are never graded, and a grade figure that no task could
 * feed is left out with its reason rather than shown empty.
 */
export const GradingCoverage = z.object({
  /** The evaluation's tasks with a grader: every grade figure covers these and no other. */
  tasksWithGrader: z.array(z.string()),
  /** The evaluation's tasks without one: judged by the external judges alone. */
  tasksWithoutGrader: z.array(z.string()),
  /** Tasks of the loop's collections and sampled matches without a grader: their runs were not graded. */
  loopTasksWithoutGrader: z.array(z.string()),
  /** The evaluation's episodes of tasks without a grader (never graded, so never counted as a failed grade). */
  rolloutsWithoutGrader: Count,
  /** What the figures rest on, in words; null when every task has a grader. */
  note: z.string().nullable(),
  /** Grade figures left out, each with why; empty when every figure has a graded task to cover. */
  omitted: z.array(z.object({ figure: GradeFigure, reason: z.string() })),
});
export type GradingCoverage = z.infer<typeof GradingCoverage>;

export const EvaluationFigures = z.object({
  settings: z.object({
    confidence: z.number(),
    tieMargin: z.number(),
    bootstrapSeed: z.number().int(),
    resamples: z.number().int(),
    reference: z.string(),
    singleAgentCondition: z.string(),
    /** The judges pooled into "all judges" and the strengths. */
    pooledJudges: z.array(z.string()),
  }),
  counts: z.object({ judgments: Count, rollouts: Count, ungradedRollouts: Count, selectedRuns: Count }),
  winRates: z.array(ComparisonWinRates),
  orderInconsistency: z.array(OrderInconsistency),
  strengths: z.array(GenerationStrengths),
  grades: z.array(GradeSummary),
  gradeDifferences: z.array(PairedGradeDifference),
  tokens: z.array(TokenEfficiency),
  delegation: z.array(DelegationRate),
  agreement: z.array(EvaluatorAgreement),
  rewardHacking: z.array(RewardHacking),
  grading: GradingCoverage,
});
export type EvaluationFigures = z.infer<typeof EvaluationFigures>;
