/**
 * The figures of a plan. Every figure says what it rests on: the configuration (a count the stages will make exactly
 * as planned), a budget, a finished run's measurement, `mass doctor`'s throughput, or an assumption, named.
 */

/**
 * A count of work: `count` when everything goes as configured (every episode succeeds, every judgment decides, every
 * search beats its reference), `upTo` the most the configuration allows (top-ups, arbitration matches, adaptive
 * rounds). Equal when the count cannot vary.
 */
export interface WorkCount {
  count: number;
  upTo: number;
}

/** A figure and what it rests on: `configuration`, `budget`, `measured in <run>`, `doctor throughput`, `assumed: …`. */
export interface Figure {
  value: number;
  basis: string;
}

export type PlanStage = 'search' | 'collection' | 'tournament' | 'training' | 'evaluation' | 'benchmark';

/** One stage of one generation (or of the evaluation): its episodes and model calls. */
export interface StageWork {
  stage: PlanStage;
  /** The generation playing the roles; null for the evaluation and the benchmark, which span generations. */
  generation: string | null;
  /** The tasks it works on (a training: none). */
  tasks: number;
  episodes: WorkCount;
  /** Pairwise judgments: one pair judged once (in one or both A/B orders). */
  judgments: WorkCount;
  /** Judge model calls before repairs: a judgment in both orders is two. */
  judgeCalls: WorkCount;
  optimizerCalls: WorkCount;
  /** The evaluation's judge calls per judge: each external judge by name, `self` for the candidates judging themselves. */
  callsByJudge?: Record<string, number>;
  /** What `count` assumes and what makes `upTo` larger, in words. */
  notes: string[];
}

export function exactly(count: number): WorkCount {
  return { count, upTo: count };
}

export function addCounts(...counts: readonly WorkCount[]): WorkCount {
  return {
    count: counts.reduce((sum, next) => sum + next.count, 0),
    upTo: counts.reduce((sum, next) => sum + next.upTo, 0),
  };
}

export function scaleCount(count: WorkCount, factor: number): WorkCount {
  return { count: count.count * factor, upTo: count.upTo * factor };
}

export const NO_WORK: WorkCount = exactly(0);

/** The stage totals of a plan's stages. */
export function stageTotals(
  stages: readonly StageWork[],
): Pick<StageWork, 'episodes' | 'judgments' | 'judgeCalls' | 'optimizerCalls'> {
  return {
    episodes: addCounts(...stages.map((stage) => stage.episodes)),
    judgments: addCounts(...stages.map((stage) => stage.judgments)),
    judgeCalls: addCounts(...stages.map((stage) => stage.judgeCalls)),
    optimizerCalls: addCounts(...stages.map((stage) => stage.optimizerCalls)),
  };
}

/** A stage with no work counted yet (a training's, or one a run's records fill in). */
export function emptyStage(stage: PlanStage, generation: string | null, tasks = 0): StageWork {
  return {
    stage,
    generation,
    tasks,
    episodes: exactly(0),
    judgments: exactly(0),
    judgeCalls: exactly(0),
    optimizerCalls: exactly(0),
    notes: [],
  };
}
