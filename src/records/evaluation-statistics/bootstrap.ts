import { seededRandom } from '../../ranking/seeded-random.js';
import { percentileInterval, type Interval } from '../../statistics/interval.js';

/**
 * A stratified cluster bootstrap: each stratum (a task) keeps its number of clusters (episode
 * pairs), drawn from its own clusters with replacement, so every resample has the design of the
 * data and tasks are never mixed. A cluster travels whole (every judgment of an episode pair, all
 * seeds and orders), because those judgments are not independent of each other. The draws come from
 * src/ranking's seeded generator: the same data, seed and resample count give the same intervals.
 */
export interface BootstrapOptions {
  seed: number;
  resamples: number;
  /** Default 0.95. */
  confidence?: number;
}

/**
 * Percentile intervals of several statistics computed on the same resamples (one per entry of what
 * `statistic` returns). A statistic that is undefined on a resample (null: e.g. no decided judgment
 * was drawn) is left out for that resample; an interval from fewer than half the resamples is null,
 * as is one for a statistic undefined on the data itself, and one whose resamples all gave the same value.
 */
export function bootstrapIntervals<Cluster>(
  strata: readonly (readonly Cluster[])[],
  statistic: (resample: readonly (readonly Cluster[])[]) => readonly (number | null)[],
  options: BootstrapOptions,
): (Interval | null)[] {
  const confidence = options.confidence ?? 0.95;
  if (!Number.isSafeInteger(options.resamples) || options.resamples < 1) {
    throw new RangeError(
      `bootstrap resamples ${options.resamples}: use a whole number of at least 1, e.g. 1000`,
    );
  }
  const observed = statistic(strata);
  const draws = observed.map(() => [] as number[]);
  const random = seededRandom(options.seed);
  for (let resample = 0; resample < options.resamples; resample++) {
    const drawn = strata.map((clusters) =>
      clusters.map(() => clusters[Math.floor(random() * clusters.length)]!),
    );
    const values = statistic(drawn);
    values.forEach((value, index) => {
      if (value !== null && Number.isFinite(value)) draws[index]?.push(value);
    });
  }
  return draws.map((values, index) => {
    if (observed[index] === null || values.length < options.resamples / 2) return null;
    const interval = percentileInterval(values, confidence);
    // Resamples that never differ (one unit per task, or every unit alike) measure no uncertainty: they cannot
    // support an interval, and a point would claim certainty from a handful of units.
    const width = interval.upper - interval.lower;
    return width <= 1e-12 * Math.max(1, Math.abs(interval.lower)) ? null : interval;
  });
}

/** The interval of one statistic. */
export function bootstrapInterval<Cluster>(
  strata: readonly (readonly Cluster[])[],
  statistic: (resample: readonly (readonly Cluster[])[]) => number | null,
  options: BootstrapOptions,
): Interval | null {
  return bootstrapIntervals(strata, (resample) => [statistic(resample)], options)[0]!;
}
