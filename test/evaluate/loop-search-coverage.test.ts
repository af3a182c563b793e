import { describe, expect, it } from 'vitest';

import { loopSearchCoverage, loopTaskCoverage } from '../../src/records/loop-search-coverage.js';
import { searchRecord } from './search-records.js';

describe('the loop’s own search coverage, from the search records alone', () => {
  const searches = [
    // Champion after each iteration, v0 first.
    searchRecord('L0', 'won-at-v1', ['reference', 'v1', 'v1', 'v3']),
    searchRecord('L0', 'kept-v0', ['v0', 'v0', 'v0', 'v0']),
    searchRecord('L0', 'never', ['reference', 'reference', 'reference', 'reference']),
    searchRecord('L0', 'short', ['reference', 'reference']),
    searchRecord('L10', 'late', ['reference', 'reference', 'v2']),
    searchRecord('L2', 'late', ['reference', 'v1', 'v2']),
  ];

  it('per task: the first iteration off the reference, and every change of champion', () => {
    expect(loopTaskCoverage(searches[0]!)).toEqual({
      task: 'won-at-v1',
      iterationsRun: 4,
      firstWin: 1,
      championChanges: 2,
      champion: 'v3',
    });
    expect([loopTaskCoverage(searches[1]!).firstWin, loopTaskCoverage(searches[1]!).championChanges]).toEqual(
      [0, 1],
    );
    expect([loopTaskCoverage(searches[2]!).firstWin, loopTaskCoverage(searches[2]!).championChanges]).toEqual(
      [null, 0],
    );
  });

  it('per generation, in generation order: the cumulative curve with censored tasks kept, and the summary', () => {
    const coverage = loopSearchCoverage(searches);
    expect(coverage.map((generation) => generation.generation)).toEqual(['L0', 'L2', 'L10']);
    const l0 = coverage[0]!;
    expect(l0.tasks.map((task) => task.task)).toEqual(['kept-v0', 'never', 'short', 'won-at-v1']);
    expect(l0.curve.map((point) => `${point.won}/${point.tasks}`)).toEqual(['1/4', '2/4', '2/4', '2/4']);
    // Sorted first wins 0, 1, censored, censored: the median X(2) = 1; four tasks are too few for an exact 95 %
    // interval (binom.cdf(0, 4, ½) = 0.0625 > 0.025), so it is unbounded.
    expect(l0.summary).toEqual({
      tasks: 4,
      won: 2,
      censored: 2,
      median: { median: 1, interval: { lower: 0, upper: null }, coverage: 1 },
    });
    expect(l0.championChanges.mean).toBe((2 + 1 + 0 + 0) / 4);
  });

  it('gives mean champion changes a reproducible bootstrap interval over tasks, none when every task is alike', () => {
    const [l0] = loopSearchCoverage(searches);
    const interval = l0!.championChanges.interval!;
    expect(interval.lower).toBeGreaterThanOrEqual(0);
    expect(interval.upper).toBeLessThanOrEqual(2);
    expect(interval.lower).toBeLessThan(0.75);
    expect(interval.upper).toBeGreaterThan(0.75);
    expect(loopSearchCoverage(searches)[0]!.championChanges.interval).toEqual(interval);
    const alike = loopSearchCoverage([searchRecord('L0', 'a', ['v0']), searchRecord('L0', 'b', ['v0'])]);
    expect(alike[0]!.championChanges).toEqual({ mean: 1, interval: null });
  });
});
