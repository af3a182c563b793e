import { z } from 'zod';

/**
 * How a judge sees each pair with each seed, the one setting of the judge's A/B orders wherever a pair is judged (the
 * search's `search.judgeMode`, the tournament's `distill.judgeMode`, the evaluation's `evaluation.orders`, and the
 * `mode` a judgment record keeps). `both`: once in each A/B order (two judgments, which also measure the judge's
 * position bias); `random`: once, in one order drawn from the seed and the pair (the official protocol, half the judge
 * calls). The draw is a hash of the seed and the judgment's key, so the same configuration always draws the same
 * orders.
 */
export const JudgeOrders = z
  .enum(['both', 'random'])
  .describe(
    'both: each pair judged in both A/B orders; random: in one order drawn from the seed and the pair (the official protocol)',
  );
export type JudgeOrders = z.infer<typeof JudgeOrders>;
