import { describe, expect, it } from 'vitest';

import {
  judgeWinRates,
  orderInconsistency,
  signTest,
  wilsonInterval,
  winRateCell,
  type PairOutcome,
  type ScoredVerdict,
} from '../../../src/evaluate/statistics/index.js';
import { alwaysFirst, judged } from './support.js';

const bootstrap = { seed: 7, resamples: 500, confidence: 0.95 };

function verdicts(task: string, outcomes: readonly PairOutcome[]): ScoredVerdict[] {
  return outcomes.map((outcome, replicate) => ({ task, replicate, outcome }));
}

describe('win rate of one cell', () => {
  it('counts wins, losses and ties and gives both definitions with their intervals', () => {
    const cell = winRateCell(
      verdicts('t1', ['win', 'win', 'win', 'loss', 'tie', 'tie', 'win', 'loss']),
      0.95,
    );
    expect(cell).toMatchObject({ wins: 4, losses: 2, ties: 2, judgments: 8, episodePairs: 8 });
    // W/(W+L) = 4/6; (W + T/2)/N = 5/8.
    expect(cell.winRate).toBeCloseTo(4 / 6, 12);
    expect(cell.winRateWithTies).toBeCloseTo(5 / 8, 12);
    expect(cell.winRateWilson).toEqual(wilsonInterval(4, 6));
    expect(cell.winRateWithTiesWilson).toEqual(wilsonInterval(5, 8));
    expect(cell.signTestP).toBe(signTest(4, 2));
  });

  it('has no rate when nothing was decided', () => {
    const cell = winRateCell(verdicts('t1', ['tie', 'tie']), 0.95);
    expect(cell).toMatchObject({ winRate: null, winRateWilson: null, signTestP: null, winRateWithTies: 0.5 });
  });
});

describe('a judge that always answers "A"', () => {
  const judgments = [0, 1, 2, 3, 4].flatMap((replicate) =>
    [1, 2, 3].flatMap((seed) => alwaysFirst({ replicate, seed, judge: 'external:first' })),
  );

  it('has 100 % order inconsistency', () => {
    expect(orderInconsistency(judgments, 0.95)).toEqual([
      {
        judge: 'external:first',
        pairsInBothOrders: 15,
        inconsistent: 15,
        rate: 1,
        rateWilson: wilsonInterval(15, 15),
      },
    ]);
  });

  it('wins exactly half in both-orders mode, with a bootstrap interval of exactly 0.5', () => {
    const rates = judgeWinRates('external:first', judgments, bootstrap);
    expect(rates.pooled).toMatchObject({ wins: 15, losses: 15, winRate: 0.5, signTestP: 1, episodePairs: 5 });
    // Every episode pair holds one win and one loss per seed, so every resample gives 0.5.
    expect(rates.pooled.winRateBootstrap).toEqual({ lower: 0.5, upper: 0.5 });
  });
});

describe('order inconsistency', () => {
  it('counts only pairs judged in both orders with the same seed, per judge', () => {
    const judgments = [
      judged({ judge: 'a', seed: 1, order: 'candidate-first', outcome: 'win' }),
      judged({ judge: 'a', seed: 1, order: 'baseline-first', outcome: 'win' }),
      judged({ judge: 'a', seed: 2, order: 'candidate-first', outcome: 'tie' }),
      judged({ judge: 'a', seed: 2, order: 'baseline-first', outcome: 'loss' }),
      // Seed 3 only in one order: not a pair in both orders.
      judged({ judge: 'a', seed: 3, order: 'candidate-first', outcome: 'loss' }),
      judged({ judge: 'b', seed: 1, order: 'candidate-first', outcome: 'win' }),
    ];
    expect(orderInconsistency(judgments, 0.95)).toEqual([
      { judge: 'a', pairsInBothOrders: 2, inconsistent: 1, rate: 0.5, rateWilson: wilsonInterval(1, 2) },
      { judge: 'b', pairsInBothOrders: 0, inconsistent: 0, rate: null, rateWilson: null },
    ]);
  });
});

describe('win rates per task and pooled', () => {
  it('splits by task with Wilson intervals and pools with a reproducible bootstrap', () => {
    const all = [
      ...verdicts('t1', ['win', 'win', 'win', 'loss', 'win', 'win']),
      ...verdicts('t2', ['loss', 'win', 'tie', 'win', 'loss', 'loss']),
    ];
    const rates = judgeWinRates('external:x', all, bootstrap);
    expect(rates.perTask.map((cell) => [cell.task, cell.wins, cell.losses, cell.ties])).toEqual([
      ['t1', 5, 1, 0],
      ['t2', 2, 3, 1],
    ]);
    expect(rates.perTask[0]!.winRateWilson).toEqual(wilsonInterval(5, 6));
    expect(rates.pooled.winRate).toBeCloseTo(7 / 11, 12);
    const { lower, upper } = rates.pooled.winRateBootstrap!;
    expect(lower).toBeLessThan(7 / 11);
    expect(upper).toBeGreaterThan(7 / 11);
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
    const interval = judgeWinRates('x', verdicts('t1', outcomes), { ...bootstrap, resamples: 2000 }).pooled
      .winRateBootstrap!;
    const halfWidth = 1.959964 * Math.sqrt((0.7 * 0.3) / 400);
    expect(Math.abs(interval.lower - (0.7 - halfWidth))).toBeLessThan(0.006);
    expect(Math.abs(interval.upper - (0.7 + halfWidth))).toBeLessThan(0.006);
  });

  it('resamples episode pairs, not judgments: the seeds and orders of one pair move together', () => {
    // Four pairs, each judged eight times with one verdict: the pooled interval is that of 4 pairs, not 32 judgments.
    const all = [0, 1, 2, 3].flatMap((replicate) =>
      Array.from({ length: 8 }, () => ({
        task: 't1',
        replicate,
        outcome: (replicate < 3 ? 'win' : 'loss') as PairOutcome,
      })),
    );
    const rates = judgeWinRates('x', all, bootstrap);
    // Pair-level resampling can draw four winning pairs (probability (3/4)^4 ≈ 0.32) and can draw two of each.
    expect(rates.pooled.winRateBootstrap!.upper).toBe(1);
    expect(rates.pooled.winRateBootstrap!.lower).toBeLessThanOrEqual(0.5);
    // Treating the 32 judgments as independent would give a far narrower interval.
    expect(rates.pooled.winRateWilson!.upper).toBeLessThan(0.9);
  });

  it('gives the pooled Wilson interval, not a bootstrap of no width, when no decisive verdict went the other way', () => {
    const all = [
      ...verdicts('t1', ['win', 'tie', 'win', 'tie']),
      ...verdicts('t2', ['tie', 'win', 'tie', 'tie']),
    ];
    const rates = judgeWinRates('external:x', all, bootstrap);
    expect(rates.pooled).toMatchObject({ wins: 3, losses: 0, ties: 5, winRate: 1 });
    // Every resample of these pairs has W/(W+L) = 1: a percentile interval of [1, 1] would claim certainty.
    expect(rates.pooled.winRateBootstrap).toEqual(wilsonInterval(3, 3));
    expect(rates.pooled.winRateBootstrap!.lower).toBeLessThan(0.5);
  });
});
