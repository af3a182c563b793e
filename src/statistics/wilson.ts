import type { Interval } from './interval.js';
import { twoSidedZ } from './normal-quantile.js';

/**
 * Wilson's score interval for a proportion of `successes` in `trials` (successes may be fractional,
 * as in (W + T/2)/N). Unlike the normal ±z·sqrt(p(1−p)/n) it stays inside [0, 1] and does not
 * collapse to a point at 0 or n successes. Null when there are no trials.
 */
export function wilsonInterval(successes: number, trials: number, confidence = 0.95): Interval | null {
  if (!(trials >= 0) || !(successes >= 0) || successes > trials) {
    throw new RangeError(`Wilson interval of ${successes} in ${trials}: successes must be from 0 to trials`);
  }
  if (trials === 0) return null;
  const z = twoSidedZ(confidence);
  const proportion = successes / trials;
  const zSquaredPerTrial = (z * z) / trials;
  const centre = (proportion + zSquaredPerTrial / 2) / (1 + zSquaredPerTrial);
  const halfWidth =
    (z / (1 + zSquaredPerTrial)) *
    Math.sqrt((proportion * (1 - proportion)) / trials + zSquaredPerTrial / (4 * trials));
  return { lower: Math.max(0, centre - halfWidth), upper: Math.min(1, centre + halfWidth) };
}
