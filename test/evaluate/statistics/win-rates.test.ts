import { describe, expect, it } from 'vitest';

import {
  judgeWinRates,
  orderInconsistency,
  wilsonInterval,
  winRateCell,
  type Interval,
  type PairOutcome,
  type ScoredVerdict,
} from '../../../src/records/evaluation-statistics/index.js';
import { seededRandom } from '../../../src/ranking/seeded-random.js';
import { alwaysFirst, judged } from './support.js';

const bootstrap = { seed: 7, resamples: 500, confidence: 0.95 };

function verdicts(task: string, outcomes: readonly PairOutcome[]): ScoredVerdict[] {
  return outcomes.map((outcome, replicate) => ({ task, replicate, outcome }));
}

/** `judgments` verdicts of one pair, all the same outcome. */
function judgedTimes(
  task: string,
  replicate: number,
  outcome: PairOutcome,
  judgments: number,
): ScoredVerdict[] {
  return Array.from({ length: judgments }, () => ({ task, replicate, outcome }));
}

describe('win rate of one cell, the episode pair as the unit', () => {
  it('makes each pair a win, loss or tie by the mean of its judgments, and counts pairs', () => {
    const cell = winRateCell(
      [
        // Pair 0: win, win, tie → preference 5/6, a win. Pair 1: win, loss → ½, a tie. Pair 2: loss, tie → ¼, a loss.
        ...verdicts('t1', ['win']),
        { task: 't1', replicate: 0, outcome: 'win' },
        { task: 't1', replicate: 0, outcome: 'tie' },
        { task: 't1', replicate: 1, outcome: 'win' },
        { task: 't1', replicate: 1, outcome: 'loss' },
        { task: 't1', replicate: 2, outcome: 'loss' },
        { task: 't1', replicate: 2, outcome: 'tie' },
      ],
      0.95,
    );
    expect(cell).toMatchObject({ pairs: 3, wins: 1, losses: 1, ties: 1, winRate: 0.5, signTestP: 1 });
    expect(cell.meanPreference).toBeCloseTo((5 / 6 + 1 / 2 + 1 / 4) / 3, 12);
    expect(cell.winRateWithTies).toBeCloseTo(0.5, 12);
    // The judgments as recorded: 3 wins, 2 losses, 2 ties, and the paper's W/(W+L) over them.
    expect(cell.judgments).toEqual({ count: 7, wins: 3, losses: 2, ties: 2, winRate: 3 / 5 });
  });

  it('gives one decided pair out of two an exact interval, not the certainty of its eight judgments', () => {
    // The demo's L1 against L0 on demo-potency: 4 wins on one pair and 4 ties on the other. Counted as 8 independent
    // judgments this was [0.510, 1] with p = 0.125; one decided pair supports neither.
    const cell = winRateCell([...judgedTimes('t1', 0, 'win', 4), ...judgedTimes('t1', 1, 'tie', 4)], 0.95);
    expect(cell).toMatchObject({ pairs: 2, wins: 1, losses: 0, ties: 1, winRate: 1, signTestP: 1 });
    // scipy.stats.binomtest(1, 1).proportion_ci(method='exact'): (0.025, 1.0).
    expect(cell.winRateInterval!.lower).toBeCloseTo(0.025, 12);
    expect(cell.winRateInterval!.upper).toBe(1);
    expect(cell.winRateWithTiesInterval!.lower).toBeLessThan(0.5);
  });

  it('keeps ½ inside the interval when a few decided pairs carry many judgments each', () => {
    // Three pairs, 40 winning judgments each: 120 judgments would give p ≈ 1.5e-36; three pairs give p = 0.25.
    const cell = winRateCell(
      [0, 1, 2].flatMap((replicate) => judgedTimes('t1', replicate, 'win', 40)),
      0.95,
    );
    expect(cell.signTestP).toBeCloseTo(0.25, 12);
    // scipy.stats.binomtest(3, 3).proportion_ci(method='exact').low = 0.2924017738212867.
    expect(cell.winRateInterval!.lower).toBeCloseTo(0.2924017738212867, 10);
    expect(cell.winRateWithTiesInterval!.lower).toBeLessThan(0.5);
    expect(cell.judgments).toMatchObject({ count: 120, wins: 120, winRate: 1 });
  });

  it('has no decided rate when every pair tied, and a with-ties interval that keeps its width', () => {
    const cell = winRateCell(verdicts('t1', ['tie', 'tie']), 0.95);
    expect(cell).toMatchObject({
      winRate: null,
      winRateInterval: null,
      signTestP: null,
      winRateWithTies: 0.5,
    });
    expect(cell.winRateWithTiesInterval).toEqual(wilsonInterval(1, 2));
  });
});

describe('intervals and the sign test over the decided pairs agree', () => {
  it('leaves ½ out of an interval only when the exact sign test rejects at the same level (per task: exactly then)', () => {
    const random = seededRandom(5);
    const draw = (): PairOutcome => {
      const value = random();
      return value < 0.55 ? 'win' : value < 0.8 ? 'loss' : 'tie';
    };
    let rejected = 0;
    for (let trial = 0; trial < 60; trial++) {
      const all: ScoredVerdict[] = [];
      for (const task of ['t1', 't2', 't3']) {
        const pairs = 1 + Math.floor(random() * 12);
        for (let replicate = 0; replicate < pairs; replicate++) {
          const judgments = 1 + Math.floor(random() * 6);
          for (let index = 0; index < judgments; index++) all.push({ task, replicate, outcome: draw() });
        }
      }
      const rates = judgeWinRates('x', all, { ...bootstrap, resamples: 200 });
      const excludesHalf = (interval: Interval) => interval.lower > 0.5 || interval.upper < 0.5;
      for (const cell of [...rates.perTask, rates.pooled]) {
        if (cell.signTestP === null) continue;
        const significant = cell.signTestP <= 0.05;
        if (significant) rejected++;
        // Per task the exact interval is the test's own inversion; the others are at least as wide.
        if (cell !== rates.pooled) expect(excludesHalf(cell.winRateInterval!)).toBe(significant);
        for (const interval of [cell.winRateInterval!, cell.winRateWithTiesInterval!]) {
          if (excludesHalf(interval)) expect(significant).toBe(true);
        }
      }
    }
    // The check must have seen both kinds of cell.
    expect(rejected).toBeGreaterThan(0);
  });
});

describe('a judge that always answers "A"', () => {
  const judgments = [0, 1, 2, 3, 4].flatMap((replicate) =>
    [1, 2, 3].flatMap((seed) => alwaysFirst({ replicate, seed, judge: 'external:first' })),
  );

  it('has 100 % order inconsistency, over episode pairs', () => {
    expect(orderInconsistency(judgments, 0.95)).toEqual([
      {
        judge: 'external:first',
        pairsInBothOrders: 5,
        seedsInBothOrders: 15,
        inconsistent: 15,
        rate: 1,
        rateWilson: wilsonInterval(5, 5),
      },
    ]);
  });

  it('ties every pair in both-orders mode: no decided rate, and a with-ties rate of ½ with a width', () => {
    const rates = judgeWinRates('external:first', judgments, bootstrap);
    expect(rates.pooled).toMatchObject({
      pairs: 5,
      wins: 0,
      losses: 0,
      ties: 5,
      winRate: null,
      winRateWithTies: 0.5,
    });
    expect(rates.pooled.judgments).toMatchObject({ count: 30, wins: 15, losses: 15, winRate: 0.5 });
    // Every resample is all ties: the bootstrap has no interval, the pooled one is Wilson's over the five pairs.
    expect(rates.pooled.winRateWithTiesBootstrap).toBeNull();
    expect(rates.pooled.winRateWithTiesInterval).toEqual(wilsonInterval(2.5, 5));
  });
});

describe('order inconsistency', () => {
  it('counts only seeds judged in both orders, averaged per episode pair, per judge', () => {
    const judgments = [
      judged({ judge: 'a', seed: 1, order: 'candidate-first', outcome: 'win' }),
      judged({ judge: 'a', seed: 1, order: 'baseline-first', outcome: 'win' }),
      judged({ judge: 'a', seed: 2, order: 'candidate-first', outcome: 'tie' }),
      judged({ judge: 'a', seed: 2, order: 'baseline-first', outcome: 'loss' }),
      // Seed 3 only in one order: not judged in both orders.
      judged({ judge: 'a', seed: 3, order: 'candidate-first', outcome: 'loss' }),
      // A second pair, consistent on its one seed.
      judged({ judge: 'a', replicate: 1, seed: 1, order: 'candidate-first', outcome: 'win' }),
      judged({ judge: 'a', replicate: 1, seed: 1, order: 'baseline-first', outcome: 'win' }),
      judged({ judge: 'b', seed: 1, order: 'candidate-first', outcome: 'win' }),
    ];
    // Pair 0 disagrees on 1 of 2 seeds (½), pair 1 on 0 of 1 (0): the mean over pairs is ¼.
    expect(orderInconsistency(judgments, 0.95)).toEqual([
      {
        judge: 'a',
        pairsInBothOrders: 2,
        seedsInBothOrders: 3,
        inconsistent: 1,
        rate: 0.25,
        rateWilson: wilsonInterval(0.5, 2),
      },
      {
        judge: 'b',
        pairsInBothOrders: 0,
        seedsInBothOrders: 0,
        inconsistent: 0,
        rate: null,
        rateWilson: null,
      },
    ]);
  });
});

describe('win rates per task and pooled', () => {
  it('splits by task with exact intervals and pools with a reproducible bootstrap over pairs', () => {
    const all = [
      ...verdicts('t1', ['win', 'win', 'win', 'loss', 'win', 'win']),
      ...verdicts('t2', ['loss', 'win', 'tie', 'win', 'loss', 'loss']),
    ];
    const rates = judgeWinRates('external:x', all, bootstrap);
    expect(rates.perTask.map((cell) => [cell.task, cell.wins, cell.losses, cell.ties])).toEqual([
      ['t1', 5, 1, 0],
      ['t2', 2, 3, 1],
    ]);
    // scipy.stats.binomtest(5, 6).proportion_ci(method='exact'): (0.3587654210025136, 0.9957892554855104).
    expect(rates.perTask[0]!.winRateInterval!.lower).toBeCloseTo(0.3587654210025136, 10);
    expect(rates.perTask[0]!.winRateInterval!.upper).toBeCloseTo(0.9957892554855104, 10);
    expect(rates.pooled.winRate).toBeCloseTo(7 / 11, 12);
    const { lower, upper } = rates.pooled.winRateBootstrap!;
    expect(lower).toBeLessThan(7 / 11);
    expect(upper).toBeGreaterThan(7 / 11);
    // The pooled interval holds both the bootstrap and scipy's exact interval of 7 in 11: (0.3079…, 0.8907…).
    expect(rates.pooled.winRateInterval!.lower).toBeLessThanOrEqual(
      Math.min(lower, 0.30790471501181976 + 1e-9),
    );
    expect(rates.pooled.winRateInterval!.upper).toBeGreaterThanOrEqual(
      Math.max(upper, 0.890736556181063 - 1e-9),
    );
    expect(judgeWinRates('external:x', all, bootstrap)).toEqual(rates);
    expect(judgeWinRates('external:x', all, { ...bootstrap, seed: 8 }).pooled.winRateBootstrap).not.toEqual(
      rates.pooled.winRateBootstrap,
    );
  });

  it('approaches the normal interval p ± 1.96·sqrt(p(1−p)/n) for many independent pairs', () => {
    // 280 wins in 400 pairs: p = 0.7, normal interval 0.7 ± 0.0449.
    const outcomes = Array.from({ length: 400 }, (_, index): PairOutcome =>
      index % 10 < 7 ? 'win' : 'loss',
    );
    const rates = judgeWinRates('x', verdicts('t1', outcomes), { ...bootstrap, resamples: 2000 });
    const interval = rates.pooled.winRateBootstrap!;
    const halfWidth = 1.959964 * Math.sqrt((0.7 * 0.3) / 400);
    expect(Math.abs(interval.lower - (0.7 - halfWidth))).toBeLessThan(0.006);
    expect(Math.abs(interval.upper - (0.7 + halfWidth))).toBeLessThan(0.006);
    // With this many pairs the exact interval is close to it, so widening to it costs little:
    // scipy.stats.binomtest(280, 400).proportion_ci(method='exact') = (0.6524781209263112, 0.7445332719041994).
    expect(rates.pooled.winRateInterval!.lower).toBeGreaterThan(0.65);
    expect(rates.pooled.winRateInterval!.upper).toBeLessThan(0.75);
  });

  it('resamples episode pairs, not judgments: the seeds and orders of one pair move together', () => {
    // Four pairs, each judged eight times with one verdict: the pooled interval is that of 4 pairs, not 32 judgments.
    const all = [0, 1, 2, 3].flatMap((replicate) =>
      judgedTimes('t1', replicate, replicate < 3 ? 'win' : 'loss', 8),
    );
    const rates = judgeWinRates('x', all, bootstrap);
    expect(rates.pooled).toMatchObject({ pairs: 4, wins: 3, losses: 1, signTestP: 0.625 });
    // Pair-level resampling can draw four winning pairs (probability (3/4)^4 ≈ 0.32) and can draw two of each.
    expect(rates.pooled.winRateBootstrap!.upper).toBe(1);
    expect(rates.pooled.winRateBootstrap!.lower).toBeLessThanOrEqual(0.5);
    // scipy.stats.binomtest(3, 4).proportion_ci(method='exact').low = 0.19412044968324338.
    expect(rates.pooled.winRateInterval!.lower).toBeLessThanOrEqual(0.19412044968324338 + 1e-9);
  });

  it('never gives a pooled interval of no width when no decided pair went the other way', () => {
    const all = [
      ...verdicts('t1', ['win', 'tie', 'win', 'tie']),
      ...verdicts('t2', ['tie', 'win', 'tie', 'tie']),
    ];
    const rates = judgeWinRates('external:x', all, bootstrap);
    expect(rates.pooled).toMatchObject({ wins: 3, losses: 0, ties: 5, winRate: 1 });
    // Every resample of these pairs has W/(W+L) = 1: the bootstrap has no interval and the exact one stands.
    expect(rates.pooled.winRateBootstrap).toBeNull();
    // scipy.stats.binomtest(3, 3).proportion_ci(method='exact').low = 0.2924017738212867.
    expect(rates.pooled.winRateInterval!.lower).toBeCloseTo(0.2924017738212867, 10);
    expect(rates.pooled.winRateInterval!.upper).toBe(1);
  });
});
