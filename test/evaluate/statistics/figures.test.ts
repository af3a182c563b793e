import { describe, expect, it } from 'vitest';

import {
  computeEvaluationFigures,
  EvaluationFigures,
  type GradedRollout,
  type JudgedPair,
} from '../../../src/records/evaluation-statistics/index.js';
import { UserError } from '../../../src/errors.js';
import { alwaysFirst, judged, rollout } from './support.js';

/**
 * Three tasks × 8 replicates of L0 and L1 in two conditions; L1 is graded 6 points higher. A fair
 * judge prefers L1 on 7 of every 8 replicates in both orders and two seeds; a second judge always
 * answers "A".
 */
function evaluation(): { judgments: JudgedPair[]; rollouts: GradedRollout[] } {
  const judgments: JudgedPair[] = [];
  const rollouts: GradedRollout[] = [];
  for (const task of ['t1', 't2', 't3']) {
    for (let replicate = 0; replicate < 8; replicate++) {
      for (const condition of ['bare', 'single-agent']) {
        const tokens = condition === 'bare' ? 1500 : 1000;
        rollouts.push(
          rollout({
            task,
            condition,
            replicate,
            generation: 'L0',
            grade: 50 + replicate,
            outputTokens: tokens,
          }),
        );
        rollouts.push(
          rollout({
            task,
            condition,
            replicate,
            generation: 'L1',
            grade: 56 + replicate,
            outputTokens: tokens,
            delegations: 1,
            subagentThreads: 1,
          }),
        );
      }
      for (const seed of [1, 2]) {
        for (const order of ['candidate-first', 'baseline-first'] as const) {
          judgments.push(
            judged({
              task,
              replicate,
              seed,
              order,
              judge: 'external:fair',
              outcome: replicate === 0 ? 'loss' : 'win',
            }),
          );
        }
        judgments.push(...alwaysFirst({ task, replicate, seed, judge: 'external:first' }));
      }
    }
  }
  return { judgments, rollouts };
}

const options = { comparisons: [{ candidate: 'L1', baseline: 'L0' }], bootstrapSeed: 3, resamples: 300 };

describe('evaluation figures', () => {
  const figures = computeEvaluationFigures(evaluation(), options);

  it('satisfy their own schema and survive JSON unchanged (no NaN or Infinity)', () => {
    expect(EvaluationFigures.parse(figures)).toEqual(figures);
    expect(JSON.parse(JSON.stringify(figures))).toEqual(figures);
  });

  it('show a better generation winning with an interval above 0.5 and a higher oracle grade', () => {
    const bare = figures.winRates.find((entry) => entry.condition === 'bare')!;
    expect(bare.judges.map((judge) => judge.judge)).toEqual([
      'external:fair',
      'external:first',
      'all judges',
      'oracle',
    ]);
    const fair = bare.judges[0]!;
    // 21 of 24 episode pairs won (replicate 0 of each task lost), each judged by two seeds in both orders.
    expect(fair.pooled).toMatchObject({ pairs: 24, wins: 21, losses: 3, ties: 0, winRate: 0.875 });
    expect(fair.pooled.judgments).toMatchObject({ count: 96, wins: 84, losses: 12, winRate: 0.875 });
    expect(fair.pooled.winRateInterval!.lower).toBeGreaterThan(0.5);
    // scipy.stats.binomtest(21, 24).pvalue = 0.0002771615982055664.
    expect(fair.pooled.signTestP).toBeCloseTo(0.0002771615982055664, 12);
    expect(fair.perTask).toHaveLength(3);
    // The oracle sees 6 points > the tie margin of 2 on every pair.
    expect(bare.judges[3]!.pooled).toMatchObject({ wins: 24, losses: 0, winRate: 1 });
    const grades = figures.grades.filter((entry) => entry.condition === 'bare');
    expect(grades.map((entry) => [entry.generation, entry.mean])).toEqual([
      ['L0', 53.5],
      ['L1', 59.5],
    ]);
    expect(figures.gradeDifferences.find((entry) => entry.condition === 'bare')).toMatchObject({
      generation: 'L1',
      pairs: 24,
      meanDifference: 6,
    });
  });

  it('show the "A" judge with 100 % order inconsistency and a win rate of exactly 0.5', () => {
    expect(figures.orderInconsistency).toEqual([
      expect.objectContaining({
        judge: 'external:fair',
        pairsInBothOrders: 24,
        seedsInBothOrders: 48,
        rate: 0,
      }),
      expect.objectContaining({ judge: 'external:first', pairsInBothOrders: 24, inconsistent: 48, rate: 1 }),
    ]);
    const first = figures.winRates[0]!.judges.find((judge) => judge.judge === 'external:first')!;
    // Its two orders cancel on every pair: every pair a tie, nothing decided, half of the judgments won.
    expect(first.pooled).toMatchObject({ ties: 24, winRate: null, winRateWithTies: 0.5 });
    expect(first.pooled.judgments.winRate).toBe(0.5);
  });

  it('measure the token efficiency of multi- against single-agent, and delegation', () => {
    const bareL1 = figures.tokens.find((entry) => entry.generation === 'L1' && entry.condition === 'bare')!;
    // Same grades for 1.5 times the tokens.
    expect(bareL1.ratioToSingleAgent!.ratio).toBeCloseTo(1 / 1.5, 12);
    expect(bareL1.ratioToReference!.ratio).toBeCloseTo(59.5 / 53.5, 12);
    expect(figures.delegation.find((entry) => entry.generation === 'L1')).toMatchObject({ rate: 1 });
  });

  it('measure agreement between the judges and the oracle on the same episode pairs', () => {
    const pairs = figures.agreement.map((entry) => [
      entry.sample,
      ...entry.evaluators,
      entry.items,
      entry.agreement,
    ]);
    // The fair judge agrees with the oracle except on replicate 0 of each task; the "A" judge's two orders cancel to a tie.
    expect(pairs).toEqual([
      ['evaluation', 'external:fair', 'external:first', 24, 0],
      ['evaluation', 'external:fair', 'oracle', 24, 21 / 24],
      ['evaluation', 'external:first', 'oracle', 24, 0],
    ]);
  });

  it('are reproducible from the bootstrap seed, and its intervals change with it', () => {
    expect(computeEvaluationFigures(evaluation(), options)).toEqual(figures);
    const reseeded = computeEvaluationFigures(evaluation(), { ...options, bootstrapSeed: 4 });
    expect(reseeded.winRates[0]!.judges[0]!.pooled.winRateBootstrap).not.toEqual(
      figures.winRates[0]!.judges[0]!.pooled.winRateBootstrap,
    );
    expect(reseeded.settings.bootstrapSeed).toBe(4);
  });

  it('pool only the judges named, and find the comparisons when none are given', () => {
    const only = computeEvaluationFigures(evaluation(), { resamples: 50, pooledJudges: ['external:fair'] });
    expect(only.settings.pooledJudges).toEqual(['external:fair']);
    expect(only.winRates.map((entry) => [entry.candidate, entry.baseline, entry.condition])).toEqual([
      ['L1', 'L0', 'bare'],
      ['L1', 'L0', 'single-agent'],
    ]);
    // One pooled judge: no "all judges" row.
    expect(only.winRates[0]!.judges.map((judge) => judge.judge)).toEqual([
      'external:fair',
      'external:first',
      'oracle',
    ]);
    expect(only.strengths[0]!.judgments).toBe(96);
  });
});

describe('evaluation figure inputs', () => {
  const { judgments, rollouts } = evaluation();

  it('refuse a judgment counted twice, naming both', () => {
    expect(() => computeEvaluationFigures({ judgments: [...judgments, judgments[5]!], rollouts })).toThrow(
      /judgments \[5\] and \[192\] are the same judgment \(t1, bare, 0, L1, L0, external:fair, 2, baseline-first\)/,
    );
  });

  it('refuse a rollout counted twice and a judge named like a figure row', () => {
    expect(() => computeEvaluationFigures({ judgments, rollouts: [...rollouts, rollouts[0]!] })).toThrow(
      UserError,
    );
    expect(() =>
      computeEvaluationFigures({ judgments: [judged({ judge: 'oracle', outcome: 'win' })], rollouts }),
    ).toThrow(/judgments\[0\]\.judge: "oracle" is reserved/);
  });

  it('refuse malformed rows and options with the field named', () => {
    const bad = { ...judgments[0]!, outcome: 'draw' } as unknown as JudgedPair;
    expect(() => computeEvaluationFigures({ judgments: [bad], rollouts: [] })).toThrow(
      /judgments: \[0\]\.outcome/,
    );
    expect(() => computeEvaluationFigures({ judgments, rollouts }, { resamples: 0 })).toThrow(
      /evaluation figure options: resamples/,
    );
    expect(() =>
      computeEvaluationFigures(
        { judgments, rollouts },
        { comparisons: [{ candidate: 'L1', baseline: 'L1' }] },
      ),
    ).toThrow(/compares a generation with itself/);
  });

  it('give empty figures for an empty evaluation', () => {
    const empty = computeEvaluationFigures({ judgments: [], rollouts: [] });
    expect(empty.winRates).toEqual([]);
    expect(empty.counts).toEqual({ judgments: 0, rollouts: 0, ungradedRollouts: 0, selectedRuns: 0 });
    expect(EvaluationFigures.parse(empty)).toEqual(empty);
  });
});
