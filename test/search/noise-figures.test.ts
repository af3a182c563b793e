import { describe, expect, it } from 'vitest';

import { noiseFigures, poolNoiseFigures } from '../../src/records/noise-figures.js';
import type { PromotionRerun, SelfComparison } from '../../src/records/repeat-records.js';
import type { ChampionMatch } from '../../src/records/search-records.js';
import { wilsonInterval } from '../../src/statistics/wilson.js';

type Result = ChampionMatch['result'];
type Purpose = ChampionMatch['purpose'];

const match = (
  first: string,
  second: string,
  result: Result,
  purpose: Purpose = 'candidate-vs-champion',
) => ({
  first,
  second,
  purpose,
  result,
  rationale: null,
  judgment: result === 'walkover' ? null : `search/L0/t/repeats/judgments/${first}-vs-${second}.json`,
});

const run = (design: string, index: number) => (index === 0 ? design : `${design}-r${index}`);

/** Run `candidate` of a design against its run `incumbent`: promoted exactly when the candidate won (either rule). */
const self = (design: string, candidate: number, incumbent: number, result: Result): SelfComparison => ({
  design,
  candidate,
  incumbent,
  match: match(run(design, candidate), run(design, incumbent), result),
  promoted: result === 'first',
});

/**
 * A `paper` search: every two runs of the reference and of v2 against each other, and v2's promotion over the
 * reference replayed on both reruns. v2's first rerun failed (its matches as the candidate are walkovers); the judge
 * gave no verdict on v2-r2 against v2.
 */
const paperTask = {
  selfComparisons: [
    self('reference', 1, 0, 'tie'),
    self('reference', 2, 0, 'first'),
    self('reference', 2, 1, 'second'),
    self('v2', 1, 0, 'walkover'),
    self('v2', 2, 0, 'failed'),
    self('v2', 2, 1, 'first'),
  ],
  promotions: [
    {
      version: 'v2',
      championBefore: 'reference',
      original: [match('v2', 'reference', 'first')],
      replays: [
        { index: 1, matches: [match('v2-r1', 'reference-r1', 'walkover')], promoted: false },
        { index: 2, matches: [match('v2-r2', 'reference-r2', 'first')], promoted: true },
      ],
    },
  ] satisfies PromotionRerun[],
};

/**
 * An `official` search: v4 beat the reference and then v2 in arbitration. Replayed: on rerun 1 it beats the reference
 * but ties the arbitration; on rerun 2 the judgment against the reference fails, so nothing is decided.
 */
const officialTask = {
  selfComparisons: [
    self('reference', 1, 0, 'first'),
    self('reference', 2, 0, 'tie'),
    self('reference', 2, 1, 'tie'),
  ],
  promotions: [
    {
      version: 'v4',
      championBefore: 'v2',
      original: [
        match('v4', 'reference', 'first', 'candidate-vs-reference'),
        match('v4', 'v2', 'first', 'arbitration'),
      ],
      replays: [
        {
          index: 1,
          matches: [
            match('v4-r1', 'reference-r1', 'first', 'candidate-vs-reference'),
            match('v4-r1', 'v2-r1', 'tie', 'arbitration'),
          ],
          promoted: false,
        },
        {
          index: 2,
          matches: [match('v4-r2', 'reference-r2', 'failed', 'candidate-vs-reference')],
          promoted: false,
        },
      ],
    },
  ] satisfies PromotionRerun[],
};

// Every interval below is SciPy's Wilson interval at 95 %:
// scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method='wilson').
const SCIPY_WILSON: Record<string, [number, number]> = {
  '2/3': [0.20765960080204782, 0.9385080552796038],
  '2/5': [0.11762077423264794, 0.769275718723987],
  '1/2': [0.09453120573423074, 0.9054687942657693],
  '1/3': [0.06149194472039626, 0.7923403991979523],
  '0/1': [0.0, 0.7934506856227626],
  '3/5': [0.23072428127601297, 0.8823792257673521],
  '3/8': [0.13684428582359737, 0.6942576053973728],
  '0/3': [0.0, 0.5614970317550454],
  '4/4': [0.5101091635454027, 1.0],
};

function expectShare(
  share: { count: number; of: number; rate: number | null; interval: unknown },
  key: string,
) {
  const [count, of] = key.split('/').map(Number) as [number, number];
  expect(share).toMatchObject({ count, of });
  expect(share.rate).toBeCloseTo(count / of, 12);
  const [lower, upper] = SCIPY_WILSON[key]!;
  expect(share.interval).toEqual({ lower: expect.closeTo(lower, 8), upper: expect.closeTo(upper, 8) });
}

describe('search noise figures from hand-made judgments', () => {
  it('paper rule: flips over every two run indices, spurious promotions of a design over itself, repeats of a promotion', () => {
    const figures = noiseFigures(paperTask);
    // v2 vs reference won at run 0, lost at 1 (a walkover), won at 2: pairs (0,1) and (1,2) flip, (0,2) does not.
    expectShare(figures.verdictFlips, '2/3');
    // Decided self-comparisons: 5 (the failed one is left out; the walkover is a loss). Promoted: reference-r2 over
    // reference and v2-r2 over v2-r1.
    expectShare(figures.spuriousPromotions, '2/5');
    expectShare(figures.promotionsRepeated, '1/2');
    expect(figures.failedJudgments).toBe(1);
    expect(figures.interval).toEqual({ method: 'wilson', confidence: 0.95 });
  });

  it('official rule: each match of the decision is its own pairing; a failed replay is left out', () => {
    const figures = noiseFigures(officialTask);
    // Against the reference: won at 0 and 1 (2 failed): 1 pair, no flip. Arbitration: won at 0, tie at 1: a flip.
    expectShare(figures.verdictFlips, '1/2');
    expectShare(figures.spuriousPromotions, '1/3');
    // Replay 1 decided and did not promote; replay 2 had a failed judgment.
    expectShare(figures.promotionsRepeated, '0/1');
    expect(figures.failedJudgments).toBe(1);
  });

  it('pools tasks by adding counts, then takes the rates and intervals of the sums', () => {
    const pooled = poolNoiseFigures([noiseFigures(paperTask), noiseFigures(officialTask)]);
    expectShare(pooled.verdictFlips, '3/5');
    expectShare(pooled.spuriousPromotions, '3/8');
    expectShare(pooled.promotionsRepeated, '1/3');
    expect(pooled.failedJudgments).toBe(2);
  });

  it('has no rate or interval where nothing was counted', () => {
    const figures = noiseFigures({ selfComparisons: [], promotions: [] });
    expect(figures.verdictFlips).toEqual({ count: 0, of: 0, rate: null, interval: null });
    expect(poolNoiseFigures([]).spuriousPromotions).toEqual({ count: 0, of: 0, rate: null, interval: null });
  });
});

describe('the 95 % Wilson interval', () => {
  it('matches SciPy, at 0 and at every success too', () => {
    for (const key of ['0/3', '1/3', '2/3', '3/8', '4/4']) {
      const [count, of] = key.split('/').map(Number) as [number, number];
      const [lower, upper] = SCIPY_WILSON[key]!;
      const interval = wilsonInterval(count, of, 0.95)!;
      expect(interval.lower).toBeCloseTo(lower, 8);
      expect(interval.upper).toBeCloseTo(upper, 8);
    }
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(() => wilsonInterval(3, 2)).toThrow(/from 0 to trials/);
  });
});
