import { z } from 'zod';

import type { TaskSearchResult } from './search-records.js';
import { REFERENCE } from './search-records.js';
import { CoveragePoint, curveAndSummary, FirstWinSummary } from './search-coverage-figure.js';
import { bootstrapInterval } from './evaluation-statistics/bootstrap.js';
import { Interval } from '../statistics/interval.js';

/**
 * The loop's own search coverage, from the search records alone (`search/<generation>/<task>/result.json`): a task's
 * search has found a winning design once its champion has left the bare-task reference, by the loop's own judge. No
 * outside judge is involved, so every run has it; `mass eval` with `searchCoverage` gives the outside measure
 * beside it. Read by the report and `mass compare`; nothing in the loop reads it.
 */

export const LoopTaskCoverage = z.object({
  task: z.string(),
  iterationsRun: z.number().int().nonnegative(),
  /** The first iteration after which the champion was not the reference; null when it never left it. */
  firstWin: z.number().int().nonnegative().nullable(),
  /** How many times the champion changed (the first win included). */
  championChanges: z.number().int().nonnegative(),
  champion: z.string(),
});
export type LoopTaskCoverage = z.infer<typeof LoopTaskCoverage>;

export const LoopGenerationCoverage = z.object({
  generation: z.string(),
  tasks: z.array(LoopTaskCoverage),
  curve: z.array(CoveragePoint),
  summary: FirstWinSummary,
  /** Mean champion changes per task, with a percentile bootstrap interval over tasks (null: no spread to measure). */
  championChanges: z.object({ mean: z.number().nullable(), interval: Interval.nullable() }),
});
export type LoopGenerationCoverage = z.infer<typeof LoopGenerationCoverage>;

interface LoopCoverageOptions {
  /** Default 0.95. */
  confidence?: number;
  /** The bootstrap of mean champion changes: seed and resamples (default 0 and 2,000), so a figure is reproducible. */
  bootstrapSeed?: number;
  resamples?: number;
}

/** What the search of one task says about when it first won and how often its champion changed. */
export function loopTaskCoverage(search: TaskSearchResult): LoopTaskCoverage {
  const history = search.championHistory;
  const firstWin = history.findIndex((entry) => entry.champion !== REFERENCE);
  let changes = 0;
  let champion = REFERENCE;
  for (const entry of history) {
    if (entry.champion !== champion) changes++;
    champion = entry.champion;
  }
  return {
    task: search.task,
    iterationsRun: history.length,
    firstWin: firstWin === -1 ? null : firstWin,
    championChanges: changes,
    champion: search.champion,
  };
}

/** Per generation (in generation order: L0, L1, … L10), the loop's own coverage of its tasks' searches. */
export function loopSearchCoverage(
  searches: readonly TaskSearchResult[],
  options: LoopCoverageOptions = {},
): LoopGenerationCoverage[] {
  const confidence = options.confidence ?? 0.95;
  const generations = [...new Set(searches.map((search) => search.generation))].sort(byGenerationName);
  return generations.map((generation) => {
    const tasks = searches
      .filter((search) => search.generation === generation)
      .map(loopTaskCoverage)
      .sort((a, b) => a.task.localeCompare(b.task));
    const changes = tasks.map((task) => task.championChanges);
    return {
      generation,
      tasks,
      ...curveAndSummary(tasks, confidence),
      championChanges: {
        mean: mean(changes),
        interval:
          changes.length === 0
            ? null
            : bootstrapInterval([changes], (resample) => mean(resample[0]!), {
                seed: options.bootstrapSeed ?? 0,
                resamples: options.resamples ?? 2000,
                confidence,
              }),
      },
    };
  });
}

/** Generation names in their natural order: L2 before L10. */
export function byGenerationName(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}
