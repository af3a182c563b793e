import { binomialCdf, clopperPearsonInterval } from '../../statistics/clopper-pearson.js';
import type { Interval } from '../../statistics/interval.js';

/**
 * How soon a task's workflow search first found a winning design (the paper's Figure 4), by iteration: 0 is v0, the
 * task's own design, and i the optimizer's i-th proposal. A task whose search never found one is **censored**: it is
 * known only not to have won within the iterations its search ran. Censored tasks stay in every denominator (a
 * curve over the tasks that won would always end at 100 %), and count as later than any iteration.
 */
export interface TaskFirstWin {
  task: string;
  /** Iterations the search ran: v0 and every proposal after it (a failed proposal is an iteration too). */
  iterationsRun: number;
  /** The first iteration whose design won; null when none did (censored). */
  firstWin: number | null;
}

/** One point of the cumulative curve: the tasks whose search had found a winning design by this iteration. */
export interface CoveragePoint {
  iteration: number;
  won: number;
  tasks: number;
  share: number;
  /** Clopper–Pearson exact interval of the share, over tasks. */
  interval: Interval;
}

/**
 * The cumulative share of tasks with a winning design by each iteration, from 0 to the last iteration any task's
 * search ran, each with its exact interval over tasks. A task whose search stopped earlier counts as not won after
 * its end (it is censored there, not dropped).
 */
export function coverageCurve(tasks: readonly TaskFirstWin[], confidence: number): CoveragePoint[] {
  const last = Math.max(-1, ...tasks.map((task) => task.iterationsRun - 1));
  const points: CoveragePoint[] = [];
  for (let iteration = 0; iteration <= last; iteration++) {
    const won = tasks.filter((task) => task.firstWin !== null && task.firstWin <= iteration).length;
    points.push({
      iteration,
      won,
      tasks: tasks.length,
      share: won / tasks.length,
      interval: clopperPearsonInterval(won, tasks.length, confidence)!,
    });
  }
  return points;
}

/**
 * The median iteration of the first win, with a distribution-free interval. Null bounds mean "after the last
 * iteration run": a censored task is later than every iteration.
 */
export interface MedianFirstWin {
  /** The iteration by which at least half the tasks had won (the ⌈n/2⌉-th first win); null when fewer than half ever did. */
  median: number | null;
  /**
   * The order-statistic interval [X(k), X(n−k+1)] with the largest k for which it covers at least `confidence`
   * (P(B ≤ k−1) ≤ (1 − confidence)/2 for B ~ Binomial(n, ½)). With too few tasks for any such k the interval is
   * unbounded: 0 below, null above. Exact for any distribution of first wins; conservative when they tie.
   */
  interval: { lower: number | null; upper: number | null };
  /** The interval's own coverage, 1 − 2·P(B ≤ k−1): at least `confidence`, 1 when unbounded. */
  coverage: number;
}

export function medianFirstWin(tasks: readonly TaskFirstWin[], confidence: number): MedianFirstWin | null {
  const n = tasks.length;
  if (n === 0) return null;
  // Censored tasks last: null sorts after every iteration.
  const sorted = tasks
    .map((task) => task.firstWin)
    .sort((a, b) => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : a - b));
  const orderStatistic = (rank: number): number | null => sorted[rank - 1] ?? null;
  const middle = Math.ceil(n / 2);
  const tail = (1 - confidence) / 2;
  let k = 0;
  while (k + 1 <= middle && binomialCdf(k, n, 0.5) <= tail) k++;
  return {
    median: orderStatistic(middle),
    interval:
      k === 0 ? { lower: 0, upper: null } : { lower: orderStatistic(k), upper: orderStatistic(n - k + 1) },
    coverage: k === 0 ? 1 : 1 - 2 * binomialCdf(k - 1, n, 0.5),
  };
}

/** What a curve of first wins comes to: how many tasks, how many won, and the median with its interval. */
export interface FirstWinSummary {
  tasks: number;
  won: number;
  /** Tasks that never found a winning design within their search. */
  censored: number;
  median: MedianFirstWin | null;
}

export function firstWinSummary(tasks: readonly TaskFirstWin[], confidence: number): FirstWinSummary {
  const won = tasks.filter((task) => task.firstWin !== null).length;
  return {
    tasks: tasks.length,
    won,
    censored: tasks.length - won,
    median: medianFirstWin(tasks, confidence),
  };
}
