import { describe, expect, it } from 'vitest';

import { binomialCdf, clopperPearsonInterval } from '../../../src/statistics/clopper-pearson.js';
import {
  coverageCurve,
  firstWinSummary,
  medianFirstWin,
  type TaskFirstWin,
} from '../../../src/records/evaluation-statistics/first-win.js';

const close = (actual: number, expected: number) => expect(actual).toBeCloseTo(expected, 12);

describe('the Clopper–Pearson exact interval', () => {
  // Expected: scipy.stats.beta.ppf(0.025, k, n - k + 1) and beta.ppf(0.975, k + 1, n - k) (0 at k = 0, 1 at k = n),
  // SciPy 1.17.1.
  it.each([
    [0, 12, 0, 0.2646484693970512],
    [1, 12, 0.0021075932318602264, 0.38479616515094406],
    [11, 12, 0.6152038348490559, 0.9978924067681397],
    [12, 12, 0.7353515306029488, 1],
    [2, 4, 0.06758598648854294, 0.932414013511457],
    [7, 20, 0.15390920478454118, 0.5921885345328282],
  ])('%i of %i is SciPy’s interval', (successes, trials, lower, upper) => {
    const interval = clopperPearsonInterval(successes, trials)!;
    close(interval.lower, lower);
    close(interval.upper, upper);
  });

  it('takes its level: at 90 %, 5 of 12 is SciPy’s beta.ppf(0.05, 5, 8) and beta.ppf(0.95, 6, 7)', () => {
    const interval = clopperPearsonInterval(5, 12, 0.9)!;
    close(interval.lower, 0.181024757242321);
    close(interval.upper, 0.6847622092755479);
  });

  it('is null without trials and refuses counts that are not counts', () => {
    expect(clopperPearsonInterval(0, 0)).toBeNull();
    expect(() => clopperPearsonInterval(3, 2)).toThrow(RangeError);
    expect(() => clopperPearsonInterval(1.5, 2)).toThrow(RangeError);
  });

  it('sums the binomial tail as SciPy’s binom.cdf does', () => {
    close(binomialCdf(2, 12, 0.5), 0.019287109375);
    close(binomialCdf(5, 20, 0.5), 0.020694732666015625);
    close(binomialCdf(37, 100, 0.42), 0.18122518477335967);
  });
});

const task = (name: string, firstWin: number | null, iterationsRun = 12): TaskFirstWin => ({
  task: name,
  iterationsRun,
  firstWin,
});

describe('the cumulative share of tasks with a winning design', () => {
  it('counts each task from its first win on, and keeps the tasks never won (censored) in every denominator', () => {
    const curve = coverageCurve(
      [task('a', 0, 4), task('b', 2, 4), task('c', null, 4), task('d', null, 2)],
      0.95,
    );
    expect(curve.map((point) => [point.iteration, point.won, point.tasks])).toEqual([
      [0, 1, 4],
      [1, 1, 4],
      [2, 2, 4],
      [3, 2, 4],
    ]);
    expect(curve.map((point) => point.share)).toEqual([0.25, 0.25, 0.5, 0.5]);
    // scipy.stats.beta.ppf as above: 1 of 4 and 2 of 4.
    close(curve[0]!.interval.lower, 0.006309463209709866);
    close(curve[0]!.interval.upper, 0.8058795503167565);
    close(curve[3]!.interval.lower, 0.06758598648854294);
    close(curve[3]!.interval.upper, 0.932414013511457);
  });

  it('gives the paper’s 11 of 12 by iteration 13 its exact interval', () => {
    const tasks = [
      ...Array.from({ length: 11 }, (_, index) => task(`t${index}`, index + 3, 14)),
      task('x', null, 14),
    ];
    const point = coverageCurve(tasks, 0.95).find((entry) => entry.iteration === 13)!;
    expect([point.won, point.tasks]).toEqual([11, 12]);
    close(point.interval.lower, 0.6152038348490559);
    close(point.interval.upper, 0.9978924067681397);
  });

  it('has no points without tasks', () => {
    expect(coverageCurve([], 0.95)).toEqual([]);
  });
});

describe('the median iteration of the first win', () => {
  it('is the ⌈n/2⌉-th first win, with the order-statistic interval [X(k), X(n−k+1)]', () => {
    // n = 12: k = 3, the largest k with binom.cdf(k − 1, 12, ½) ≤ 0.025 (binom.cdf(2, 12, .5) = 0.0193,
    // binom.cdf(3, 12, .5) = 0.0730); coverage 1 − 2 × 0.019287109375.
    const wins = [0, 0, 1, 1, 2, 3, 3, 5, 7];
    const median = medianFirstWin(
      [
        ...wins.map((win, index) => task(`t${index}`, win)),
        ...['x', 'y', 'z'].map((name) => task(name, null)),
      ],
      0.95,
    )!;
    expect(median.median).toBe(3);
    // X(10) is a censored task: the upper bound is after the last iteration run.
    expect(median.interval).toEqual({ lower: 1, upper: null });
    close(median.coverage, 0.96142578125);
    const everyTaskWon = medianFirstWin(
      Array.from({ length: 12 }, (_, index) => task(`t${index}`, index)),
      0.95,
    )!;
    expect([everyTaskWon.median, everyTaskWon.interval]).toEqual([5, { lower: 2, upper: 9 }]);
  });

  it('with 20 tasks takes k = 6 (binom.cdf(5, 20, ½) = 0.0207 ≤ 0.025 < binom.cdf(6, 20, ½) = 0.0577)', () => {
    const median = medianFirstWin(
      Array.from({ length: 20 }, (_, index) => task(`t${index}`, index)),
      0.95,
    )!;
    expect([median.median, median.interval]).toEqual([9, { lower: 5, upper: 14 }]);
    close(median.coverage, 0.9586105346679688);
  });

  it('is unbounded with too few tasks for any exact interval, and not reached when fewer than half won', () => {
    const few = medianFirstWin([task('a', 1), task('b', 4), task('c', null), task('d', 2)], 0.95)!;
    expect(few).toEqual({ median: 2, interval: { lower: 0, upper: null }, coverage: 1 });
    const notReached = medianFirstWin(
      [task('a', 1), ...['b', 'c', 'd', 'e'].map((name) => task(name, null))],
      0.95,
    )!;
    expect(notReached.median).toBeNull();
    expect(medianFirstWin([], 0.95)).toBeNull();
  });

  it('summarises won and censored tasks', () => {
    const summary = firstWinSummary([task('a', 0), task('b', null), task('c', 3)], 0.95);
    expect([summary.tasks, summary.won, summary.censored, summary.median?.median]).toEqual([3, 2, 1, 3]);
  });
});
