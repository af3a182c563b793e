/**
 * The exact two-sided sign test of wins against losses (ties left out): under "neither side is
 * better" the wins of the n = W + L decided judgments are Binomial(n, ½), and the p-value is the
 * probability of a split at least as uneven, 2·P(X ≤ min(W, L)) capped at 1. Summed in log space so
 * large n neither underflows nor loses the tail. Null when nothing was decided.
 */
export function signTest(wins: number, losses: number): number | null {
  if (!Number.isSafeInteger(wins) || !Number.isSafeInteger(losses) || wins < 0 || losses < 0) {
    throw new RangeError(`sign test of ${wins} wins and ${losses} losses: use whole numbers of at least 0`);
  }
  const trials = wins + losses;
  if (trials === 0) return null;
  const fewer = Math.min(wins, losses);
  // log of C(n, k)/2^n for k = 0 … fewer, by the recurrence C(n, k+1) = C(n, k)·(n − k)/(k + 1).
  const logTerms: number[] = [];
  let logTerm = -trials * Math.LN2;
  for (let k = 0; k <= fewer; k++) {
    logTerms.push(logTerm);
    logTerm += Math.log(trials - k) - Math.log(k + 1);
  }
  const largest = logTerms[logTerms.length - 1]!;
  const tail = Math.exp(largest) * logTerms.reduce((sum, value) => sum + Math.exp(value - largest), 0);
  return Math.min(1, 2 * tail);
}
