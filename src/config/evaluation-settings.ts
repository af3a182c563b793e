import { z } from 'zod';

import { Endpoint } from './endpoint.js';

const EvaluationCondition = z
  .enum(['bare', 'workflow', 'single-agent'])
  .describe(
    "bare: the task alone (the paper's); workflow: the task's champion design; single-agent: the bare task without the agent tool",
  );

/**
 * `mass eval`: what is compared, on which tasks and conditions, and who judges. An outside measure: no loop stage
 * reads it or anything it writes, so it may be changed or added to a run at any time.
 */
export const Evaluation = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"')
      .default('default')
      .describe('the records go to evaluation/<name>/'),
    generations: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("generations of the run's registry, by name; default: every registered one"),
    models: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"'),
            endpoint: Endpoint,
          })
          .strict(),
      )
      .optional()
      .describe('named model endpoints to compare instead (two checkpoints, an adapter and its base)'),
    comparisons: z
      .array(z.object({ candidate: z.string().min(1), baseline: z.string().min(1) }).strict())
      .optional()
      .describe('default: each generation against the first (L0), and against its parent'),
    conditions: z.array(EvaluationCondition).min(1).default(['bare']),
    tasks: z.array(z.string().min(1)).optional().describe("task ids; default: the suite's test split"),
    rollouts: z.number().int().positive().default(10).describe('per task, model and condition'),
    seed: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("replicate i samples with seed + i for every model; default: the run's seed"),
    judges: z
      .array(
        Endpoint.extend({
          name: z
            .string()
            .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"')
            .optional(),
        }).strict(),
      )
      .default([])
      .describe('external judges (any provider); each judges every pair with every seed in both orders'),
    judgeSeeds: z.number().int().positive().default(3),
    selfJudge: z
      .boolean()
      .default(true)
      .describe(
        'the candidate also judges its own pairs, as the loop does: the self-judge of the agreement figures',
      ),
    judgeRepairAttempts: z.number().int().min(0).default(2),
    oracleTieMargin: z
      .number()
      .min(0)
      .default(2)
      .describe("the oracle's preference: within this many grade points, a tie"),
    tournamentSample: z
      .number()
      .int()
      .min(0)
      .default(20)
      .describe('tournament matches per task re-judged for evaluator agreement'),
    concurrency: z
      .object({
        episodes: z.number().int().positive().default(4).describe('per model endpoint'),
        judgments: z.number().int().positive().default(8).describe('per judge'),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type EvaluationConfig = z.output<typeof Evaluation>;

/** The evaluation section with every default, for a configuration that has none. */
export function evaluationConfig(config: { evaluation?: EvaluationConfig }): EvaluationConfig {
  return config.evaluation ?? Evaluation.parse({});
}
