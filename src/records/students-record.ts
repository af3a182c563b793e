import { z } from 'zod';

import { EvaluationOrders } from '../config/judge-orders.js';
import { Interval } from '../statistics/interval.js';
import { defineRecord } from '../store/record.js';
import { JudgeWinRates } from './evaluation-figures.js';
import { TrainingMetrics } from './training-metrics.js';

/**
 * The paper's Figure 6 compares students trained from the same base on single-agent (S), multi-agent (M) and mixed
 * (X) trajectories. A student here is a kind and a size: the number of selected episodes its dataset is built from.
 */
export const STUDENT_KINDS = ['S', 'M', 'X'] as const;
export type StudentKind = (typeof STUDENT_KINDS)[number];

export const STUDENT_KIND_NAMES: Record<StudentKind, string> = {
  S: 'single-agent',
  M: 'multi-agent',
  X: 'mixed',
};

export const ConditionPair = z.object({
  task: z.string(),
  /** The sampling seed both episodes ran with: the collection pairs the team's run and the single agent's by it. */
  seed: z.number().int(),
  team: z.string(),
  single: z.string(),
  /** Tokens the episode's model generated over its conversations (`episode.json` usage, completion tokens). */
  teamOutputTokens: z.number().int().nonnegative(),
  singleOutputTokens: z.number().int().nonnegative(),
  /** The larger of the two over the smaller is at most the length ratio. */
  lengthMatched: z.boolean(),
  /** Decided judgments of the pair, every judge, seed and order. */
  judgments: z.number().int().nonnegative(),
  /** Their mean from the team's side (win 1, tie ½, loss 0); null with no decided judgment. */
  preference: z.number().nullable(),
});
export type ConditionPair = z.infer<typeof ConditionPair>;

/**
 * The external judges' preference between the team's outputs and the single agent's on the same tasks of the same
 * round (the paper reports 85.1 % for the team, 80 % on length-matched pairs). Each pair is a team collection run and
 * the single-agent collection run with the same seed (the same task data and sampling seed); the pair is the unit of
 * every interval, as in the evaluation.
 */
export const TeamVersusSingle = z.object({
  generation: z.string(),
  judges: z.array(z.string()),
  judgeSeeds: z.number().int().positive(),
  orders: EvaluationOrders,
  lengthRatio: z.number().min(1),
  pairs: z.array(ConditionPair),
  /** Runs left without a partner: a failed, tampered or errored run on either side, or a seed only one side ran. */
  unpaired: z.array(z.object({ task: z.string(), episodeId: z.string(), reason: z.string() })),
  /** The team as the candidate: each judge's win rates, then every judge pooled (`all judges`) when there are two or more. */
  overall: z.array(JudgeWinRates),
  /** The same over the length-matched pairs alone. */
  lengthMatched: z.array(JudgeWinRates),
  failedJudgments: z.number().int().nonnegative(),
});
export type TeamVersusSingle = z.infer<typeof TeamVersusSingle>;

export const StudentResult = z.object({
  name: z.string(),
  kind: z.enum(['S', 'M', 'X']),
  /** Selected episodes in its data, by condition. */
  teamEpisodes: z.number().int().nonnegative(),
  singleEpisodes: z.number().int().nonnegative(),
  episodeIds: z.array(z.string()),
  /** The round's validation selections its trainer chose a checkpoint on (see `studentDataset`). */
  validationEpisodeIds: z.array(z.string()).default([]),
  /** The sampler's exact counts for its windows (see `studentTrainingPlan`). */
  tokens: z.object({
    windows: z.number().int().nonnegative(),
    steps: z.number().int().positive(),
    batchSize: z.number().int().positive(),
    storedSupervisedTokens: z.number().nonnegative(),
    expectedProcessedSupervisedTokens: z.number().nonnegative(),
    processedSupervisedTokens: z.number().nonnegative(),
  }),
  trainer: z.string(),
  metrics: TrainingMetrics,
  /** Against the base, pooled over tasks, every judge's pairs (the evaluation's first judge row): null before it. */
  winRate: z.number().nullable(),
  winRateInterval: Interval.nullable(),
  winRateWithTies: z.number().nullable(),
  winRateWithTiesInterval: Interval.nullable(),
  pairs: z.number().int().nonnegative(),
  judge: z.string().nullable(),
});
export type StudentResult = z.infer<typeof StudentResult>;

/** `students/<name>/students.json`: the experiment's students, their tokens and win rates against the base. */
export const StudentsRecord = defineRecord({
  kind: 'students',
  version: 1,
  schema: z.object({
    name: z.string(),
    /** The round whose selections the data comes from. */
    generation: z.string(),
    base: z.string(),
    trainer: z.string(),
    /** What the trained model is: `toy` says the figures show nothing about a real model. */
    standIn: z.string().nullable(),
    /** The students' evaluation against the base; null when the experiment trained no student. */
    evaluation: z
      .object({
        rollouts: z.number().int().positive(),
        tasks: z.array(z.string()),
        judges: z.array(z.string()),
        condition: z.string(),
      })
      .nullable(),
    students: z.array(StudentResult),
    /** The round's team outputs judged against its single-agent outputs; null when it collected none single-agent. */
    teamVersusSingle: TeamVersusSingle.nullable().default(null),
  }),
});
export type StudentsRecord = z.infer<(typeof StudentsRecord)['schema']>;
