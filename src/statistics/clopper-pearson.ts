import type { Interval } from './interval.js';

/**
 * The exact (Clopper–Pearson) interval for a proportion of `successes` in `trials`: the set of p for which neither
 * tail of Binomial(trials, p) at the observed count falls below (1 − confidence)/2. It never covers less than its
 * level, which matters on few units (a dozen tasks, ten episode pairs), often at 0 or all of them, where normal
 * approximations (and even Wilson's) cover too little. It is the exact binomial test turned around, so at p = ½ it
 * leaves ½ out exactly when the two-sided sign test (sign-test.ts) rejects at the same level: 5 wins of 5 is
 * [0.478, 1] and p = 0.0625, where Wilson's [0.57, 1] would claim more. Equal to SciPy's
 * `beta.ppf(α/2, k, n − k + 1)` and `beta.ppf(1 − α/2, k + 1, n − k)`. Null when there are no trials.
 */
export function clopperPearsonInterval(
  successes: number,
  trials: number,
  confidence = 0.95,
): Interval | null {
  if (
    !Number.isSafeInteger(successes) ||
    !Number.isSafeInteger(trials) ||
    successes < 0 ||
    successes > trials
  ) {
    throw new RangeError(
      `Clopper–Pearson interval of ${successes} in ${trials}: use whole numbers with successes from 0 to trials`,
    );
  }
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`Clopper–Pearson interval at confidence ${confidence}: use a level between 0 and 1`);
  }
  if (trials === 0) return null;
  const tail = (1 - confidence) / 2;
  // The lower bound: P(X ≥ k | p) = tail, which rises with p; the upper: P(X ≤ k | p) = tail, which falls with p.
  const lower = successes === 0 ? 0 : solveIncreasing((p) => 1 - binomialCdf(successes - 1, trials, p), tail);
  const upper =
    successes === trials ? 1 : solveIncreasing((p) => 1 - binomialCdf(successes, trials, p), 1 - tail);
  return { lower, upper };
}

/**
 * P(X ≤ k) for X ~ Binomial(n, p), summed in log space from the recurrence of the terms, so neither a large n nor a
 * p near 0 or 1 underflows the sum.
 */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  const logP = Math.log(p);
  const logQ = Math.log1p(-p);
  const logTerms: number[] = [];
  // log C(n, 0) p^0 q^n, then C(n, i+1)/C(n, i) = (n − i)/(i + 1).
  let logTerm = n * logQ;
  for (let i = 0; i <= k; i++) {
    logTerms.push(logTerm);
    logTerm += Math.log(n - i) - Math.log(i + 1) + logP - logQ;
  }
  const largest = Math.max(...logTerms);
  const sum = logTerms.reduce((total, value) => total + Math.exp(value - largest), 0);
  return Math.min(1, Math.exp(largest) * sum);
}

/** The p in (0, 1) where an increasing function of p reaches `target`, by bisection to the limit of doubles. */
function solveIncreasing(f: (p: number) => number, target: number): number {
  let low = 0;
  let high = 1;
  for (let step = 0; step < 200 && high - low > 1e-15; step++) {
    const middle = (low + high) / 2;
    if (f(middle) < target) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}
