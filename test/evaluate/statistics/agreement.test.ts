import { describe, expect, it } from 'vitest';

import {
  cohenKappa,
  combinedVerdict,
  evaluationVerdicts,
  evaluatorAgreement,
  oraclePreference,
  type EvaluatorVerdict,
  type GradedRollout,
  type JudgedPair,
  type PairOutcome,
  wilsonInterval,
} from '../../../src/records/evaluation-statistics/index.js';

// Expected κ from scikit-learn: sklearn.metrics.cohen_kappa_score(first, second).
const first: PairOutcome[] = [
  'win',
  'win',
  'loss',
  'tie',
  'win',
  'loss',
  'loss',
  'tie',
  'win',
  'win',
  'tie',
  'loss',
];
const second: PairOutcome[] = [
  'win',
  'loss',
  'loss',
  'tie',
  'win',
  'win',
  'loss',
  'loss',
  'win',
  'tie',
  'tie',
  'loss',
];

describe("Cohen's κ", () => {
  it('matches scikit-learn on three categories', () => {
    expect(cohenKappa(first, second)).toEqual({
      items: 12,
      agreement: 8 / 12,
      kappa: expect.closeTo(0.49473684210526314, 12),
    });
  });

  it('matches scikit-learn on two categories with different shares', () => {
    const one = [...Array<PairOutcome>(8).fill('win'), 'loss', 'loss'];
    const other = [...Array<PairOutcome>(6).fill('win'), ...Array<PairOutcome>(4).fill('loss')];
    expect(cohenKappa(one, other).kappa).toBeCloseTo(0.5454545454545454, 12);
  });

  it('is 1 for identical ratings, null when chance explains all, and null without items', () => {
    expect(cohenKappa(first, first).kappa).toBe(1);
    expect(cohenKappa(['win', 'win'], ['win', 'win'])).toEqual({ items: 2, agreement: 1, kappa: null });
    expect(cohenKappa([], [])).toEqual({ items: 0, agreement: null, kappa: null });
    expect(() => cohenKappa(['win'], [])).toThrow(/same items/);
  });
});

describe('oracle preference', () => {
  it('lets the higher grade win, with a tie within the margin (inclusive)', () => {
    expect(oraclePreference(70, 67, 2)).toBe('win');
    expect(oraclePreference(70, 68, 2)).toBe('tie');
    expect(oraclePreference(66, 70, 2)).toBe('loss');
    expect(oraclePreference(70, 69.5, 0)).toBe('win');
  });
});

describe('combined verdict of one evaluator on one item', () => {
  it('is the side with more points, a tie when even', () => {
    expect(combinedVerdict(['win', 'loss'])).toBe('tie');
    expect(combinedVerdict(['win', 'tie'])).toBe('win');
    expect(combinedVerdict(['loss', 'tie', 'tie'])).toBe('loss');
    expect(combinedVerdict(['win', 'loss', 'tie', 'win', 'loss', 'tie'])).toBe('tie');
  });
});

describe('evaluator agreement', () => {
  it('measures every two evaluators on the items both judged, with reproducible bootstrap intervals', () => {
    const verdicts: EvaluatorVerdict[] = first.flatMap((outcome, index) => [
      { evaluator: 'judge-a', task: index < 6 ? 't1' : 't2', item: `pair-${index}`, outcome },
      { evaluator: 'judge-b', task: index < 6 ? 't1' : 't2', item: `pair-${index}`, outcome: second[index]! },
    ]);
    // judge-c saw only the first three items.
    verdicts.push({ evaluator: 'judge-c', task: 't1', item: 'pair-0', outcome: 'loss' });
    verdicts.push({ evaluator: 'judge-c', task: 't1', item: 'pair-1', outcome: 'loss' });
    verdicts.push({ evaluator: 'judge-c', task: 't1', item: 'pair-2', outcome: 'loss' });
    const options = { seed: 3, resamples: 400 };
    const figures = evaluatorAgreement({ name: 'evaluation', verdicts }, options);
    expect(figures.map((figure) => figure.evaluators)).toEqual([
      ['judge-a', 'judge-b'],
      ['judge-a', 'judge-c'],
      ['judge-b', 'judge-c'],
    ]);
    const [ab, ac, bc] = figures;
    expect(ab).toMatchObject({
      sample: 'evaluation',
      items: 12,
      agreement: 8 / 12,
      intervalMethod: 'wilson-and-bootstrap',
    });
    expect(ab!.kappa).toBeCloseTo(0.49473684210526314, 12);
    expect(ab!.kappaInterval!.lower).toBeLessThan(ab!.kappa!);
    expect(ab!.kappaInterval!.upper).toBeGreaterThan(ab!.kappa!);
    // The twelve items are the units: Wilson's interval of 8 agreements in 12.
    expect(ab!.agreementInterval).toEqual(wilsonInterval(8, 12));
    expect(evaluatorAgreement({ name: 'evaluation', verdicts }, options)).toEqual(figures);
    // pair-0 win vs loss, pair-1 win vs loss, pair-2 loss vs loss.
    expect(ac).toMatchObject({ items: 3, agreement: 1 / 3 });
    // judge-b: win, loss, loss against loss ×3.
    expect(bc).toMatchObject({ items: 3, agreement: 2 / 3 });
  });

  it('gives a handful of items that all agree an interval with a width, not certainty', () => {
    // Four pairs, both evaluators saying win, win, loss, tie: every resample agrees fully, yet four items are few.
    const outcomes: PairOutcome[] = ['win', 'win', 'loss', 'tie'];
    const verdicts: EvaluatorVerdict[] = outcomes.flatMap((outcome, index) => [
      { evaluator: 'a', task: 't1', item: `pair-${index}`, outcome },
      { evaluator: 'b', task: 't1', item: `pair-${index}`, outcome },
    ]);
    const [figure] = evaluatorAgreement({ name: 'evaluation', verdicts }, { seed: 1, resamples: 200 });
    expect(figure).toMatchObject({ items: 4, agreement: 1, kappa: 1 });
    // Wilson's interval of 4 in 4, by hand: its lower end is n/(n + z²) = 4/(4 + 1.96²) = 0.5101.
    expect(figure!.agreementInterval!.lower).toBeCloseTo(0.5101, 4);
    // κ at that lower agreement, chance agreement (½·½ + ¼·¼ + ¼·¼ = 0.375) held: (0.5101 − 0.375)/0.625 = 0.2162.
    expect(figure!.kappaInterval!.lower).toBeCloseTo((figure!.agreementInterval!.lower - 0.375) / 0.625, 12);
    expect(figure!.kappaInterval!.upper).toBe(1);
  });

  it('turns the evaluation into verdicts: each judgment, and the oracle once per episode pair from the grades', () => {
    const judgment = (
      replicate: number,
      seed: number,
      order: JudgedPair['order'],
      outcome: PairOutcome,
    ): JudgedPair => ({
      task: 't1',
      condition: 'bare',
      replicate,
      candidate: 'L1',
      baseline: 'L0',
      judge: 'external:x',
      seed,
      order,
      outcome,
    });
    const rollout = (replicate: number, generation: string, grade: number | null): GradedRollout => ({
      task: 't1',
      condition: 'bare',
      replicate,
      generation,
      grade,
      outputTokens: 10,
      delegations: 0,
      subagentThreads: 0,
    });
    const verdicts = evaluationVerdicts(
      [
        judgment(0, 1, 'candidate-first', 'win'),
        judgment(0, 1, 'baseline-first', 'win'),
        judgment(1, 1, 'candidate-first', 'loss'),
      ],
      [
        rollout(0, 'L1', 80),
        rollout(0, 'L0', 70),
        rollout(1, 'L1', 71),
        rollout(1, 'L0', 70),
        rollout(2, 'L1', 1),
        rollout(2, 'L0', 9),
      ],
      2,
    );
    expect(
      verdicts.filter((verdict) => verdict.evaluator === 'oracle').map((verdict) => verdict.outcome),
    ).toEqual(['win', 'tie']);
    expect(verdicts.filter((verdict) => verdict.evaluator === 'external:x')).toHaveLength(3);
    const [agreement] = evaluatorAgreement({ name: 'evaluation', verdicts }, { seed: 1, resamples: 50 });
    // Replicate 0: win (twice) vs oracle win; replicate 1: loss vs oracle tie.
    expect(agreement).toMatchObject({ evaluators: ['external:x', 'oracle'], items: 2, agreement: 0.5 });
  });

  it('leaves out an ungraded pair from the oracle', () => {
    const verdicts = evaluationVerdicts(
      [
        {
          task: 't1',
          condition: 'bare',
          replicate: 0,
          candidate: 'L1',
          baseline: 'L0',
          judge: 'external:x',
          seed: 0,
          order: 'candidate-first',
          outcome: 'win',
        },
      ],
      [
        {
          task: 't1',
          condition: 'bare',
          replicate: 0,
          generation: 'L1',
          grade: null,
          outputTokens: 1,
          delegations: 0,
          subagentThreads: 0,
        },
        {
          task: 't1',
          condition: 'bare',
          replicate: 0,
          generation: 'L0',
          grade: 50,
          outputTokens: 1,
          delegations: 0,
          subagentThreads: 0,
        },
      ],
      2,
    );
    expect(verdicts.map((verdict) => verdict.evaluator)).toEqual(['external:x']);
  });
});
