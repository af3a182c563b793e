import { z } from 'zod';

/** A two-sided interval at the figures' confidence level (0.95 unless configured). */
export const Interval = z.object({ lower: z.number(), upper: z.number() });
export type Interval = z.infer<typeof Interval>;

/**
 * The q-quantile of values sorted ascending, by linear interpolation between order statistics
 * (Hyndman and Fan's type 7, numpy's default), so it can be checked against numpy.quantile.
 */
export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('quantile of no values');
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (position - below) * (sorted[above]! - sorted[below]!);
}

/** The central `confidence` share of the values: the percentile interval of a bootstrap. */
export function percentileInterval(values: readonly number[], confidence: number): Interval {
  const sorted = [...values].sort((left, right) => left - right);
  const tail = (1 - confidence) / 2;
  return { lower: quantileOfSorted(sorted, tail), upper: quantileOfSorted(sorted, 1 - tail) };
}
