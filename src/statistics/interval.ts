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

/**
 * The smallest interval holding every given one (nulls skipped); null when none is given. Every part is a valid
 * interval of the same quantity, so their hull covers at least as often as the best of them: the conservative way to
 * combine a bootstrap that can be too narrow on few units with an exact interval that cannot.
 */
export function hull(...intervals: readonly (Interval | null | undefined)[]): Interval | null {
  const present = intervals.filter((interval): interval is Interval => interval != null);
  if (present.length === 0) return null;
  return {
    lower: Math.min(...present.map((interval) => interval.lower)),
    upper: Math.max(...present.map((interval) => interval.upper)),
  };
}
