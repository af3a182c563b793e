import { z } from 'zod';

import {
  coverageCurve,
  firstWinSummary,
  type FirstWinSummary as FirstWinSummaryValue,
  type TaskFirstWin,
} from './evaluation-statistics/first-win.js';
import { Interval } from '../statistics/interval.js';

/**
 * The search coverage figures (the paper's Figures 4 and 7): per generation, the cumulative share of tasks whose
 * workflow search had found a winning design by each iteration. Two measures of "winning" share these shapes: the
 * loop's own (its champion left the bare-task reference: `loop-search-coverage.ts`) and the outside one (every
 * non-failed judgment of the evaluation's external judges prefers the version to the reference: here). Intervals are
 * over tasks: Clopper–Pearson exact for each share, the distribution-free order-statistic interval for the median.
 */

export const CoveragePoint = z.object({
  iteration: z.number().int().nonnegative(),
  /** Tasks with a winning design at or before this iteration. */
  won: z.number().int().nonnegative(),
  tasks: z.number().int().nonnegative(),
  share: z.number(),
  /** Clopper–Pearson exact interval over tasks. */
  interval: Interval,
});

export const FirstWinSummary = z.object({
  tasks: z.number().int().nonnegative(),
  won: z.number().int().nonnegative(),
  /** Tasks that never found a winning design within their search: later than every iteration, never dropped. */
  censored: z.number().int().nonnegative(),
  median: z
    .object({
      /** The iteration by which at least half the tasks had won; null when fewer than half ever did. */
      median: z.number().int().nullable(),
      /** Order-statistic interval; a null bound is "after the last iteration run". */
      interval: z.object({ lower: z.number().int().nullable(), upper: z.number().int().nullable() }),
      /** The interval's own coverage (at least the confidence level; 1 when unbounded). */
      coverage: z.number(),
    })
    .nullable(),
});

const TaskFirstWinFields = {
  task: z.string(),
  /** Iterations the search ran (v0 is iteration 0). */
  iterationsRun: z.number().int().nonnegative(),
  /** The first iteration whose design won; null: censored. */
  firstWin: z.number().int().nonnegative().nullable(),
};

/** One version's judgments against the reference, by the evaluation's external judges. */
export const JudgedVersion = z.object({
  iteration: z.number().int().nonnegative(),
  version: z.string(),
  /** `failed`: its episode failed, so it is not judged and does not win (as the loop's walkover). */
  episode: z.enum(['judged', 'failed']),
  wins: z.number().int().nonnegative(),
  ties: z.number().int().nonnegative(),
  losses: z.number().int().nonnegative(),
  /** Judgments with no valid verdict within the repairs: left out of the vote. */
  failed: z.number().int().nonnegative(),
  /** Every non-failed judgment (every judge, seed and order) prefers the version, and there is at least one. */
  unanimous: z.boolean(),
});
export type JudgedVersion = z.infer<typeof JudgedVersion>;

export const OutsideTaskCoverage = z.object({
  ...TaskFirstWinFields,
  /** When the loop's own champion first left the reference, for comparison; null when it never did. */
  loopFirstWin: z.number().int().nonnegative().nullable(),
  versions: z.array(JudgedVersion),
});
export type OutsideTaskCoverage = z.infer<typeof OutsideTaskCoverage>;

export const OutsideGenerationCoverage = z.object({
  generation: z.string(),
  tasks: z.array(OutsideTaskCoverage),
  /** Task folders of the generation without a finished search (no result.json): left out. */
  unfinished: z.array(z.string()),
  curve: z.array(CoveragePoint),
  summary: FirstWinSummary,
});
export type OutsideGenerationCoverage = z.infer<typeof OutsideGenerationCoverage>;

/** `summary.json`'s `searchCoverage`: the outside measure of how soon each generation's searches found a winner. */
export const SearchCoverageFigure = z.object({
  confidence: z.number(),
  /** The external judges whose unanimous preference makes a win. */
  judges: z.array(z.string()),
  judgeSeeds: z.number().int().positive(),
  generations: z.array(OutsideGenerationCoverage),
  counts: z.object({
    judgments: z.number().int().nonnegative(),
    failedJudgments: z.number().int().nonnegative(),
    /** Versions whose episode failed: not judged, never a win. */
    failedEpisodes: z.number().int().nonnegative(),
  }),
});
export type SearchCoverageFigure = z.infer<typeof SearchCoverageFigure>;

/** A version's verdicts as the outside figure reads them: each judgment's outcome for the version, null if failed. */
export interface VersionVerdicts {
  iteration: number;
  version: string;
  episodeFailed: boolean;
  outcomes: ReadonlyArray<'win' | 'loss' | 'tie' | null>;
}

/** The outside coverage of one generation from the verdicts on each of its tasks' versions. */
export function outsideGenerationCoverage(options: {
  generation: string;
  tasks: ReadonlyArray<{
    task: string;
    iterationsRun: number;
    loopFirstWin: number | null;
    versions: readonly VersionVerdicts[];
  }>;
  unfinished: readonly string[];
  confidence: number;
}): OutsideGenerationCoverage {
  const tasks = options.tasks.map((task): OutsideTaskCoverage => {
    const versions = task.versions.map(judgedVersion);
    const first = versions.find((version) => version.unanimous);
    return {
      task: task.task,
      iterationsRun: task.iterationsRun,
      firstWin: first?.iteration ?? null,
      loopFirstWin: task.loopFirstWin,
      versions,
    };
  });
  return {
    generation: options.generation,
    tasks,
    unfinished: [...options.unfinished],
    ...curveAndSummary(tasks, options.confidence),
  };
}

function judgedVersion(verdicts: VersionVerdicts): JudgedVersion {
  const count = (outcome: 'win' | 'loss' | 'tie' | null) =>
    verdicts.outcomes.filter((value) => value === outcome).length;
  const wins = count('win');
  const ties = count('tie');
  const losses = count('loss');
  return {
    iteration: verdicts.iteration,
    version: verdicts.version,
    episode: verdicts.episodeFailed ? 'failed' : 'judged',
    wins,
    ties,
    losses,
    failed: count(null),
    unanimous: !verdicts.episodeFailed && wins > 0 && ties === 0 && losses === 0,
  };
}

/** The cumulative curve and its summary, for either measure. */
export function curveAndSummary(
  tasks: readonly TaskFirstWin[],
  confidence: number,
): { curve: z.infer<typeof CoveragePoint>[]; summary: FirstWinSummaryValue } {
  return { curve: coverageCurve(tasks, confidence), summary: firstWinSummary(tasks, confidence) };
}
