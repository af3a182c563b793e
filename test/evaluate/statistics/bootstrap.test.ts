import { describe, expect, it } from 'vitest';

import {
  bootstrapInterval,
  bootstrapIntervals,
  percentileInterval,
  quantileOfSorted,
} from '../../../src/records/evaluation-statistics/index.js';
import { seededRandom } from '../../../src/ranking/index.js';

const mean = (values: readonly number[]): number =>
  values.reduce((sum, value) => sum + value, 0) / values.length;

describe('percentile interval', () => {
  it('interpolates between order statistics as numpy.quantile does', () => {
    // numpy.quantile([3,1,4,1,5,9,2,6,5,3,5], [0.025, 0.975, 0.5, 0.1]) = [1.0, 8.25, 4.0, 1.0]
    const values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
    expect(percentileInterval(values, 0.95)).toEqual({ lower: 1, upper: 8.25 });
    const sorted = [...values].sort((left, right) => left - right);
    expect(quantileOfSorted(sorted, 0.5)).toBe(4);
    expect(quantileOfSorted(sorted, 0.1)).toBe(1);
  });
});

describe('stratified cluster bootstrap', () => {
  const random = seededRandom(99);
  const sample = Array.from({ length: 400 }, () => random() * 10);

  it('is reproducible from its seed and changes with it', () => {
    const options = { seed: 5, resamples: 100 };
    const statistic = (resample: readonly (readonly number[])[]): number => mean(resample.flat());
    const first = bootstrapInterval([sample], statistic, options);
    expect(bootstrapInterval([sample], statistic, options)).toEqual(first);
    expect(bootstrapInterval([sample], statistic, { ...options, seed: 6 })).not.toEqual(first);
  });

  it('gives the normal interval mean ± 1.96·s/√n for the mean of many independent values', () => {
    const average = mean(sample);
    // The bootstrap's spread of the mean is that of the empirical distribution: s with divisor n.
    const spread = Math.sqrt(mean(sample.map((value) => (value - average) ** 2)) / sample.length);
    const interval = bootstrapInterval([sample], (resample) => mean(resample.flat()), {
      seed: 1,
      resamples: 2000,
    })!;
    expect(Math.abs(interval.lower - (average - 1.959964 * spread))).toBeLessThan(0.1 * spread);
    expect(Math.abs(interval.upper - (average + 1.959964 * spread))).toBeLessThan(0.1 * spread);
  });

  it('keeps every stratum’s size and draws each stratum only from itself', () => {
    const strata = [
      [1, 2, 3],
      [10, 20],
      [100, 200, 300, 400],
    ];
    const seen: number[][][] = [];
    bootstrapInterval(
      strata,
      (resample) => {
        seen.push(resample.map((stratum) => [...stratum]));
        return 0;
      },
      { seed: 3, resamples: 50 },
    );
    // The first call is on the data itself, then one per resample.
    expect(seen).toHaveLength(51);
    expect(seen[0]).toEqual(strata);
    for (const resample of seen) {
      expect(resample.map((stratum) => stratum.length)).toEqual([3, 2, 4]);
      resample.forEach((stratum, index) => {
        for (const value of stratum) expect(strata[index]).toContain(value);
      });
    }
  });

  it('does not mix tasks: a mean over two very different strata stays as narrow as their own spreads', () => {
    const easy = Array.from({ length: 10 }, (_, index) => 90 + index / 10);
    const hard = Array.from({ length: 10 }, (_, index) => 10 + index / 10);
    const interval = bootstrapInterval([easy, hard], (resample) => mean(resample.flat()), {
      seed: 2,
      resamples: 500,
    })!;
    // Unstratified, the share of easy draws would vary and the interval would span about ±18 points.
    expect(interval.upper - interval.lower).toBeLessThan(0.5);
    expect(interval.lower).toBeLessThan(50.45);
    expect(interval.upper).toBeGreaterThan(50.45);
  });

  it('moves clusters whole', () => {
    const clusters = [
      [1, 1, 1],
      [0, 0, 0],
      [1, 1, 1],
    ];
    let partial = 0;
    bootstrapInterval(
      [clusters],
      (resample) => {
        for (const cluster of resample[0]!) if (new Set(cluster).size !== 1) partial++;
        return mean(resample.flat(2));
      },
      { seed: 4, resamples: 100 },
    );
    expect(partial).toBe(0);
  });

  it('leaves out resamples where a statistic is undefined, and gives no interval where it mostly is', () => {
    const values = [0, 0, 0, 1];
    // Defined only when the resample holds a 1 (about 68 % of resamples of 4).
    const [mostlyDefined, rarelyDefined, undefinedOnData] = bootstrapIntervals(
      [values],
      (resample) => {
        const drawn = resample.flat();
        const ones = drawn.filter((value) => value === 1).length;
        return [ones > 0 ? ones : null, ones > 2 ? ones : null, null];
      },
      { seed: 8, resamples: 400 },
    );
    expect(mostlyDefined!.lower).toBeGreaterThanOrEqual(1);
    expect(rarelyDefined).toBeNull();
    expect(undefinedOnData).toBeNull();
  });

  it('gives no interval when no resample can differ: one unit per stratum, or every unit alike', () => {
    const mean = (resample: readonly (readonly number[])[]) => {
      const drawn = resample.flat();
      return drawn.reduce((sum, value) => sum + value, 0) / drawn.length;
    };
    expect(bootstrapInterval([[3], [5], [9]], mean, { seed: 2, resamples: 100 })).toBeNull();
    expect(
      bootstrapInterval(
        [
          [4, 4, 4],
          [4, 4],
        ],
        mean,
        { seed: 2, resamples: 100 },
      ),
    ).toBeNull();
    expect(bootstrapInterval([[4, 5], [4]], mean, { seed: 2, resamples: 100 })).not.toBeNull();
  });

  it('refuses a resample count that is not a positive whole number', () => {
    expect(() => bootstrapInterval([[1]], () => 1, { seed: 1, resamples: 0 })).toThrow(/at least 1/);
  });
});
