import { z } from 'zod';

import { JudgeDirectedText } from './judge-directed-text.js';
import { PairWinner, PairSide } from './judgment-record.js';
import { defineRecord } from '../store/record.js';
import { TrainingDataStats } from './training-data-stats.js';
import { DataSplit } from './training-records.js';

/**
 * What each stage of a generation's outer loop stores: the output of its run-store step (what a resumed run gets
 * back) and, for the stages a reader looks at, a file under `distill/<generation>/`. Paths inside are relative to
 * the run directory, so a run can be moved.
 */

export const CollectedRun = z.object({
  episodeId: z.string(),
  /** The episode directory, relative to the run directory. */
  dir: z.string(),
  seed: z.number().int(),
  /** `error`: the episode could not run at all (the reason says why). */
  status: z.enum(['success', 'failure', 'error']),
  reason: z.string().nullable(),
  /** A protected file of the task was changed: never ranked, never trained on. */
  tampered: z.boolean(),
  /**
   * Text in its workspace that addresses the judge or imitates the judge's formats, as found when the run was
   * collected: played and ranked like any run (the judge is shown it marked, and told to ignore it), and counted here
   * and in the evaluation's reward-hacking figures. Absent for a run that could not run, and in older records.
   */
  judgeDirected: JudgeDirectedText.optional(),
});
export type CollectedRun = z.infer<typeof CollectedRun>;

/**
 * `distill/<generation>/<task>/collection.json`: the champion's runs with the teacher directive. Version 2 adds each
 * run's judge-directed text (`judgeDirected`), absent in version 1.
 */
export const CollectionRecord = defineRecord({
  kind: 'distill-collection',
  version: 2,
  migrate: (body) => body,
  schema: z.object({
    generation: z.string(),
    task: z.string(),
    /** The champion design's hash; null for the single-agent condition, which runs no design. */
    workflowHash: z.string().nullable(),
    /** Absent for the team (the champion design); `single-agent` for the task run without the \`agent\` tool. */
    condition: z.literal('single-agent').optional(),
    episodes: z.array(CollectedRun),
    successes: z.number().int().nonnegative(),
    topUps: z.number().int().nonnegative(),
    /** At least `needed` successes. */
    enough: z.boolean(),
  }),
});
export type CollectionRecord = z.infer<(typeof CollectionRecord)['schema']>;

export const ScheduledPair = z.object({
  /** Numbers every pair of a task's tournament, across rounds: the match's step key and file name. */
  index: z.number().int().nonnegative(),
  x: z.string(),
  y: z.string(),
});
export type ScheduledPair = z.infer<typeof ScheduledPair>;

/** One round of a task's tournament: the whole ring (or round robin), or one adaptive batch. */
export const ScheduleRound = z.object({
  round: z.number().int().nonnegative(),
  kind: z.enum(['ring', 'round-robin', 'adaptive']),
  /** The ring's opponents per episode as played (one fewer than asked when both it and the players are odd). */
  opponents: z.number().int().nullable(),
  pairs: z.array(ScheduledPair),
});
export type ScheduleRound = z.infer<typeof ScheduleRound>;

/** A judged pair; the full judgment is in `judgment` (a `pairwise-judgment` record). */
export const MatchOutcome = ScheduledPair.extend({
  round: z.number().int().nonnegative(),
  /** `failed`: no valid verdict within the repairs; recorded, and left out of the fit. */
  status: z.enum(['decided', 'failed']),
  winner: PairWinner.nullable(),
  /** Which episode the judge saw as A (`random` mode); null in `both` mode, which shows each order once. */
  shownFirst: PairSide.nullable(),
  failure: z.string().nullable(),
  judgment: z.string(),
});
export type MatchOutcome = z.infer<typeof MatchOutcome>;

const Scores = z.record(z.string(), z.number());

/** `distill/<generation>/<task>/ranking.json`: the Bradley–Terry fit of the decided matches, best first. */
export const TaskRankingRecord = defineRecord({
  kind: 'distill-ranking',
  version: 1,
  schema: z.object({
    generation: z.string(),
    task: z.string(),
    /** The successful, untampered episodes: the tournament's players. */
    players: z.array(z.string()),
    /** Episodes left out of the tournament: they can never be selected, so no judgment is spent on them. */
    excluded: z.array(
      z.object({
        episodeId: z.string(),
        reason: z.enum(['failed', 'tampered']),
        detail: z.string().nullable(),
      }),
    ),
    matches: z.object({
      scheduled: z.number().int().nonnegative(),
      decided: z.number().int().nonnegative(),
      /** Pair indices of the judgments that failed, left out of the fit. */
      failed: z.array(z.number().int().nonnegative()),
    }),
    /** Null with no player. */
    fit: z
      .object({
        scores: Scores,
        stderr: Scores,
        iterations: z.number().int().nonnegative(),
        converged: z.boolean(),
        prior: z.number(),
        mode: z.enum(['map', 'official']),
        stderrMethod: z.enum(['inverse-hessian', 'diagonal-hessian']),
      })
      .nullable(),
    records: z.record(
      z.string(),
      z.object({ wins: z.number().int(), ties: z.number().int(), losses: z.number().int() }),
    ),
    /** The players, best first. */
    ranking: z.array(z.string()),
  }),
});
export type TaskRankingRecord = z.infer<(typeof TaskRankingRecord)['schema']>;

export const DatasetEpisode = z.object({
  episodeId: z.string(),
  task: z.string(),
  split: DataSplit,
  dir: z.string(),
});
export type DatasetEpisode = z.infer<typeof DatasetEpisode>;

/** `distill/<generation>/dataset/episodes.json`: which episodes the training data came from. */
export const DatasetEpisodesRecord = defineRecord({
  kind: 'distill-dataset-episodes',
  version: 1,
  schema: z.object({ generation: z.string(), episodes: z.array(DatasetEpisode) }),
});

/** The dataset step's output: the folder (relative to the run), its episodes and `stats.json`'s content. */
export const DatasetSummary = z.object({
  dir: z.string(),
  episodes: z.array(DatasetEpisode),
  stats: TrainingDataStats.schema,
});
export type DatasetSummary = z.infer<typeof DatasetSummary>;

export type DistillStage = 'collect' | 'tournament' | 'fit' | 'select' | 'dataset';

/** What a generation reports as it goes, for a live display; an exception thrown here stops the generation. */
export type DistillProgressEvent =
  | { kind: 'stage'; stage: DistillStage; task: string | null }
  /** Before a task's collection (`done` 0), as each of its episodes finishes, and after it; the total grows by the top-ups. */
  | { kind: 'episodes'; task: string; done: number; total: number }
  /** After each match, counting those found done; the total grows with each adaptive round. */
  | { kind: 'judgments'; task: string; done: number; total: number };
