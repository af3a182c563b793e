import { describe, expect, it } from 'vitest';

import { clopperPearsonInterval } from '../../src/statistics/clopper-pearson.js';
import { normalQuantile, twoSidedZ } from '../../src/statistics/normal-quantile.js';
import { signTest } from '../../src/statistics/sign-test.js';
import { wilsonInterval } from '../../src/statistics/wilson.js';

// Expected values from SciPy 1.10.1: scipy.stats.binomtest(k, n).proportion_ci(confidence_level, method='wilson'),
// scipy.stats.binomtest(w, w + l, 0.5).pvalue and scipy.stats.norm.ppf(p). Tolerances allow for the
// normal quantile's approximation (relative error below 1.2e-9).

describe('normal quantile', () => {
  it.each([
    [0.975, 1.959963984540054],
    [0.5, 0],
    [0.01, -2.3263478740408408],
    [0.001, -3.090232306167813],
    [0.995, 2.5758293035489004],
    [1e-6, -4.753424308822899],
    [0.3, -0.5244005127080409],
  ])('Φ⁻¹(%f) = %f as SciPy computes it', (p, expected) => {
    // Acklam's approximation promises a relative error below 1.15e-9.
    expect(Math.abs(normalQuantile(p) - expected)).toBeLessThanOrEqual(1.2e-9 * Math.abs(expected));
  });

  it('refuses probabilities outside (0, 1) and confidence levels outside (0, 1)', () => {
    expect(() => normalQuantile(0)).toThrow(/strictly between 0 and 1/);
    expect(() => twoSidedZ(1)).toThrow(/e\.g\. 0\.95/);
  });
});

describe('Wilson interval', () => {
  it.each([
    [16, 20, 0.5839825677481065, 0.9193423374202021],
    [0, 10, 0, 0.27753279986288926],
    [10, 10, 0.7224672001371109, 1],
    [1, 3, 0.06149194472039626, 0.7923403991979523],
    [53, 100, 0.4328885697009936, 0.6248918204065873],
    [32, 40, 0.6524269365360051, 0.8950001027456229],
  ])('%i of %i matches SciPy', (successes, trials, lower, upper) => {
    const interval = wilsonInterval(successes, trials)!;
    expect(interval.lower).toBeCloseTo(lower, 8);
    expect(interval.upper).toBeCloseTo(upper, 8);
  });

  it('takes other confidence levels', () => {
    expect(wilsonInterval(16, 20, 0.9)!.lower).toBeCloseTo(0.6216233141646322, 8);
    expect(wilsonInterval(16, 20, 0.9)!.upper).toBeCloseTo(0.906881983418789, 8);
    expect(wilsonInterval(16, 20, 0.99)!.lower).toBeCloseTo(0.5120978393677986, 8);
    expect(wilsonInterval(16, 20, 0.99)!.upper).toBeCloseTo(0.9384389199729493, 8);
  });

  it('accepts half successes (ties counted as half a win) and is null without trials', () => {
    // (W + T/2)/N with W = 15, T = 2, N = 20 is 16/20: the same interval.
    expect(wilsonInterval(15 + 2 / 2, 20)).toEqual(wilsonInterval(16, 20));
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(() => wilsonInterval(3, 2)).toThrow(/from 0 to trials/);
  });
});

describe('exact two-sided sign test', () => {
  it.each([
    [16, 4, 0.01181793212890625],
    [0, 1, 1],
    [5, 5, 1],
    [12, 3, 0.03515625],
    [3, 12, 0.03515625],
    [0, 20, 1.9073486328125e-6],
    [60, 40, 0.05688793364098088],
    [530, 470, 0.06202319509836348],
    [1100, 900, 8.457089535503812e-6],
  ])('%i wins against %i losses gives SciPy p', (wins, losses, expected) => {
    const p = signTest(wins, losses)!;
    expect(Math.abs(p - expected) / expected).toBeLessThan(1e-9);
  });

  it('does not underflow for large counts and is null when nothing was decided', () => {
    // 2·2^−5000 is below the smallest double: the p-value is 0, not NaN.
    expect(signTest(5000, 0)).toBe(0);
    expect(signTest(0, 0)).toBeNull();
    expect(() => signTest(1.5, 2)).toThrow(/whole numbers/);
  });
});

describe('Clopper–Pearson exact interval', () => {
  // scipy.stats.binomtest(x, n).proportion_ci(confidence_level=c, method='exact'), SciPy 1.10.1.
  it.each([
    [0, 10, 0.95, 0.0, 0.30849710781876294],
    [10, 10, 0.95, 0.6915028921812371, 1.0],
    [6, 20, 0.9, 0.1395537490022759, 0.507818406614815],
    [250, 1000, 0.99, 0.21549682324153818, 0.2869221344399952],
    [1, 3, 0.95, 0.008403758659612647, 0.9057006759492866],
    [5, 5, 0.95, 0.47817624989501856, 1.0],
  ])('of %i in %i at %f is [%f, %f] as SciPy computes it', (successes, trials, confidence, lower, upper) => {
    const interval = clopperPearsonInterval(successes, trials, confidence)!;
    expect(interval.lower).toBeCloseTo(lower, 10);
    expect(interval.upper).toBeCloseTo(upper, 10);
  });

  it('excludes ½ exactly when the two-sided sign test rejects at the same level', () => {
    for (let trials = 1; trials <= 30; trials++) {
      for (let wins = 0; wins <= trials; wins++) {
        const interval = clopperPearsonInterval(wins, trials, 0.95)!;
        const excludes = interval.lower > 0.5 || interval.upper < 0.5;
        expect(excludes).toBe(signTest(wins, trials - wins)! <= 0.05);
      }
    }
  });

  it('has none for no trials and refuses counts that are not whole or out of range', () => {
    expect(clopperPearsonInterval(0, 0)).toBeNull();
    expect(() => clopperPearsonInterval(1.5, 3)).toThrow(/whole numbers/);
    expect(() => clopperPearsonInterval(4, 3)).toThrow(/from 0 to trials/);
  });
});
