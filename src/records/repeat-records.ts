import { z } from 'zod';

import { JudgeOrders } from '../config/judge-orders.js';
import { defineRecord } from '../store/record.js';
import { ChampionMatch, SearchEpisode } from './search-records.js';

/**
 * What the reruns of `search.repeats` store (docs/search.md, "Search noise: Figure 8"): each rerun's episode, each
 * judgment between runs of the same designs, and the noise figures counted from them. Runs are named by
 * `repeat-runs.ts`: `v3` is the search's own run of v3 (run 0), `v3-r2` its second rerun. Nothing here is read by the
 * search.
 */

/** Rerun `index` (1 … k) of a design the search ran, unchanged, with its own sampling seed. */
export const RepeatRun = z.object({
  design: z.string(),
  index: z.number().int().positive(),
  /** The run's label in matches and judgments, e.g. `v3-r2`. */
  label: z.string(),
  seed: z.number().int(),
  episode: SearchEpisode,
});
export type RepeatRun = z.infer<typeof RepeatRun>;

/**
 * Two runs of one design judged under the search's champion rule, the later run as the candidate: `promoted` is a
 * champion changed by noise alone (a spurious promotion). A failed judgment decides nothing, as in the search.
 */
export const SelfComparison = z.object({
  design: z.string(),
  /** The candidate's run index, above the incumbent's. */
  candidate: z.number().int().positive(),
  incumbent: z.number().int().nonnegative(),
  match: ChampionMatch,
  promoted: z.boolean(),
});
export type SelfComparison = z.infer<typeof SelfComparison>;

/** A champion change played again on reruns: every design's run `index`, under the search's rule. */
export const PromotionReplay = z.object({
  index: z.number().int().positive(),
  matches: z.array(ChampionMatch),
  promoted: z.boolean(),
});
export type PromotionReplay = z.infer<typeof PromotionReplay>;

/** A version the search promoted, with the search's own matches (run 0) and their replays on each rerun. */
export const PromotionRerun = z.object({
  version: z.string(),
  championBefore: z.string(),
  original: z.array(ChampionMatch),
  replays: z.array(PromotionReplay),
});
export type PromotionRerun = z.infer<typeof PromotionRerun>;

/** A share with its count: `count` of `of`, and its 95 % Wilson score interval (null when `of` is 0). */
export const NoiseShare = z.object({
  count: z.number().int().nonnegative(),
  of: z.number().int().nonnegative(),
  rate: z.number().nullable(),
  interval: z.object({ lower: z.number(), upper: z.number() }).nullable(),
});
export type NoiseShare = z.infer<typeof NoiseShare>;

/** The search's noise, counted from the judgments between runs (see `noise-figures.ts` for each definition). */
export const NoiseFigures = z.object({
  /** Pairs of verdicts on the same two designs at two run indices that differ (win, tie or loss). */
  verdictFlips: NoiseShare,
  /** Self-comparisons the champion rule would have decided for the rerun: a champion changed by noise alone. */
  spuriousPromotions: NoiseShare,
  /** Replays of a champion change that changed the champion again. */
  promotionsRepeated: NoiseShare,
  /** Judgments between runs that gave no valid verdict: left out of every share above. */
  failedJudgments: z.number().int().nonnegative(),
  /** How each interval is computed. */
  interval: z.object({ method: z.literal('wilson'), confidence: z.number() }),
});
export type NoiseFigures = z.infer<typeof NoiseFigures>;

/** `search/<generation>/<task>/repeats.json`: a task's reruns, their judgments and its noise figures. */
export const TaskRepeatsRecord = defineRecord({
  kind: 'search-repeats',
  version: 1,
  schema: z.object({
    generation: z.string(),
    task: z.string(),
    /** `search.repeats`: reruns of each measured design. */
    repeats: z.number().int().positive(),
    championRule: z.enum(['paper', 'official']),
    judgeMode: JudgeOrders,
    /** The search's sampling seed; rerun i of every design sampled with seed + i. */
    seed: z.number().int(),
    /** The designs rerun: the bare reference and every version promoted to champion, in the search's order. */
    designs: z.array(z.string()),
    runs: z.array(RepeatRun),
    selfComparisons: z.array(SelfComparison),
    promotions: z.array(PromotionRerun),
    figures: NoiseFigures,
  }),
});
export type TaskRepeats = z.infer<(typeof TaskRepeatsRecord)['schema']>;

/** `search/<generation>/noise.json`: the noise figures of every task with reruns, pooled. */
export const GenerationNoiseRecord = defineRecord({
  kind: 'search-noise',
  version: 1,
  schema: z.object({
    generation: z.string(),
    tasks: z.array(
      z.object({ task: z.string(), repeats: z.number().int().positive(), figures: NoiseFigures }),
    ),
    figures: NoiseFigures,
  }),
});
export type GenerationNoise = z.infer<(typeof GenerationNoiseRecord)['schema']>;
