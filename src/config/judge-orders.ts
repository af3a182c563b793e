import { z } from 'zod';

/**
 * How a judge sees each pair with each seed, the one setting of the judge's A/B orders wherever a pair is judged (the
 * search's `search.judgeMode`, the tournament's `distill.judgeMode`, the evaluation's `evaluation.orders`, and the
 * `mode` a judgment record keeps). `both`: once in each A/B order (two judgments, which also measure the judge's
 * position bias); `random`: once, in one order drawn from the seed and the pair (half the judge
 * calls). The draw is a hash of the seed and the judgment's key, so the same configuration always draws the same
 * orders.
 */
export const JudgeOrders = z
  .enum(['both', 'random'])
  .describe(
    'both: each pair judged in both A/B orders; random: in one order drawn from the seed and the pair',
  );
export type JudgeOrders = z.infer<typeof JudgeOrders>;

/**
 * The orders of an evaluation's external judges: `both` and `random` as above, or `official`, the official evaluation's
 * draw exactly: one judgment per judge and seed, with the seeds 42, 43, 44… (one per `judgeSeeds`), and the pair shown
 * swapped (the baseline as A) when Python's `random.Random(seed).choice([False, True])` says so. The draw depends on
 * the seed alone, so it is the same for every pair: of the seeds 42, 43 and 44 two show the candidate first and one the
 * baseline, and every pair gets, per judge, two judgments in one order and one in the other.
 */
export const EvaluationOrders = z
  .enum(['both', 'random', 'official'])
  .describe(
    "both: each pair judged in both A/B orders; random: in one order drawn from the seed and the pair; official: the official code's draw, seeds 42, 43, 44… and the order from the seed alone",
  );
export type EvaluationOrders = z.infer<typeof EvaluationOrders>;

/** The official evaluation's first judge seed. */
export const OFFICIAL_FIRST_SEED = 42;

/** The seeds each judge judges each pair with: 0, 1, 2… or, under `official`, the official code's 42, 43, 44…. */
export function judgeSeeds(orders: EvaluationOrders, count: number): number[] {
  const first = orders === 'official' ? OFFICIAL_FIRST_SEED : 0;
  return Array.from({ length: count }, (_, index) => first + index);
}
