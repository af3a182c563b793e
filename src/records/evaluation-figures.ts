import { z } from 'zod';

import { Interval } from '../statistics/interval.js';

/**
 * Every figure of an evaluation, as embedded in `summary.json`. A figure that cannot be computed
 * (no decided judgment, nothing graded, a κ whose chance agreement is 1) is null, never NaN.
 */
const Count = z.number().int().nonnegative();
const Rate = z.number().min(0).max(1);

/**
 * Win rates with the episode pair as the unit: a pair (one task and replicate: the two sides' episodes, run with the
 * same sampling seed) is a win, loss or tie by its preference, the mean of its judgments (win 1, tie ½, loss 0).
 */
export const WinRateCell = z.object({
  /** Episode pairs judged: the independent units every interval and test of this cell is over. */
  pairs: Count,
  /** Pairs whose preference is above ½. */
  wins: Count,
  /** Pairs whose preference is below ½. */
  losses: Count,
  /** Pairs whose preference is exactly ½. */
  ties: Count,
  /** W/(W+L) over the decided pairs. */
  winRate: Rate.nullable(),
  /** Per task: the Clopper–Pearson exact interval over the decided pairs. Pooled: see `JudgeWinRates`. */
  winRateInterval: Interval.nullable(),
  /** (W + T/2)/N over the pairs. */
  winRateWithTies: Rate.nullable(),
  /** The hull of Wilson's interval over the pairs and the exact one with the ties held fixed. */
  winRateWithTiesInterval: Interval.nullable(),
  /** The mean of the pairs' preferences. */
  meanPreference: Rate.nullable(),
  /** Exact two-sided sign test of the decided pairs' wins against their losses; null with no decided pair. */
  signTestP: Rate.nullable(),
  /**
   * The judgments as recorded (every judge given, seed and order) and the paper's pooled W/(W+L) over them, to compare
   * with its tables. They are not independent of each other, so no interval or test rests on them.
   */
  judgments: z.object({
    count: Count,
    wins: Count,
    losses: Count,
    ties: Count,
    winRate: Rate.nullable(),
  }),
});
export type WinRateCell = z.infer<typeof WinRateCell>;

export const JudgeWinRates = z.object({
  /** A judge label, "oracle" (higher grade wins), or "all judges" (the pooled judges). */
  judge: z.string(),
  perTask: z.array(WinRateCell.extend({ task: z.string() })),
  /**
   * Over the pairs of every task. Its intervals are the bootstrap resampling pairs within tasks, widened where needed
   * to the exact intervals over the pooled pairs, so neither leaves out ½ unless the sign test rejects.
   */
  pooled: WinRateCell.extend({
    /** The bootstrap alone (W/(W+L) over the decided pairs); null when its resamples never differ. */
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

/**
 * How often one judge's two orders of one pair and seed disagree, the episode pair as the unit: each pair's rate is
 * the share of its seeds whose two orders disagree, and the figure is their mean. Only judgments made in both orders
 * count (none under `evaluation.orders: random`).
 */
export const OrderInconsistency = z.object({
  judge: z.string(),
  /** Episode pairs with at least one seed judged in both orders. */
  pairsInBothOrders: Count,
  /** Seeds of those pairs judged in both orders. */
  seedsInBothOrders: Count,
  /** Of those, the ones whose two verdicts (from the candidate's view) differ. */
  inconsistent: Count,
  /** The mean over pairs of each pair's share of inconsistent seeds. */
  rate: Rate.nullable(),
  /** Wilson's interval of the mean over the pairs (a share counted as a fraction of a success). */
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
  /** Wilson's interval over the items: each item (an episode pair, a match) is one unit. */
  agreementInterval: Interval.nullable(),
  /** Cohen's κ over win/loss/tie; null when chance agreement is 1 (both always say the same one thing). */
  kappa: z.number().nullable(),
  /**
   * The hull of a bootstrap over items within tasks and κ at the ends of the agreement's interval (chance agreement
   * as observed), so a handful of items that all agree never gives a point.
   */
  kappaInterval: Interval.nullable(),
  intervalMethod: z.literal('wilson-and-bootstrap'),
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

/**
 * Beside reward hacking, per generation, over every run the loop selected for training (a grader or not): how many
 * changed a protected file, and how many wrote text addressing the judge (`judge-directed-text.ts`).
 */
export const JudgeDirectedTextFigure = z.object({
  generation: z.string(),
  selected: Count,
  /** Selected runs that changed a protected file. */
  tampered: Count,
  /** Selected runs whose workspace was scanned for judge-directed text (runs collected by older versions were not). */
  scanned: Count,
  /** Scanned runs with any judge-directed text. */
  withText: Count,
  /** `withText` over `scanned`; null when none was scanned. */
  withTextRate: Rate.nullable(),
  /** Spans and characters of judge-directed text in all scanned selected runs. */
  spans: Count,
  characters: Count,
});
export type JudgeDirectedTextFigure = z.infer<typeof JudgeDirectedTextFigure>;

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
    /** What every interval and test of the win rates treats as an independent replication. */
    unit: z.literal('episode pair'),
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
  /** Absent in summaries written before it was counted: recomputed from their inputs when read. */
  judgeDirectedText: z.array(JudgeDirectedTextFigure).default([]),
  grading: GradingCoverage,
});
export type EvaluationFigures = z.infer<typeof EvaluationFigures>;
