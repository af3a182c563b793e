import { z } from 'zod';

import { TrainingMetrics } from './training-metrics.js';

export const GENERATION_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * One generation of the model: L0 is the base, each later one the parent fine-tuned on the parent's own best team
 * runs. Its weights are full weights (`mergedPath`: the base model, or an adapter merged into the weights it goes
 * over), a LoRA adapter over the full weights of its parent or of `adapterBase` (`adapterPath`), or both.
 */
export const ModelGeneration = z
  .object({
    name: z.string().regex(GENERATION_NAME, 'letters, digits, ".", "_" and "-"'),
    /** The generation it was trained from; `null` for the base. */
    parent: z.string().nullable(),
    adapterPath: z.string().min(1).optional(),
    /**
     * The generation whose full weights `adapterPath` applies to: L0 when every generation is an adapter over the
     * base (`rsi.lineage: adapters`). Absent: its parent (the paper's lineage, and registries written before).
     */
    adapterBase: z.string().regex(GENERATION_NAME).optional(),
    /** For the base: a model directory, or a model id that the trainer's loader resolves. */
    mergedPath: z.string().min(1).optional(),
    /** The training data it was trained on (e.g. `distill/L0/dataset`); `null` for the base. */
    datasetId: z.string().min(1).nullable(),
    metrics: TrainingMetrics.nullable(),
    /** The model name the inference server serves it under: what every role asks for. */
    servedAs: z.string().min(1),
    /**
     * The last deployment check (src/train/deployment-check.ts): the server's answers to the trainer's probe against
     * the trained weights' and the parent's; absent before a check was made.
     */
    deploymentCheck: z
      .object({
        at: z.iso.datetime(),
        servedAs: z.string(),
        weights: z.enum(['bf16', 'fp8']),
        tokens: z.number().int().positive(),
        tolerance: z.number().positive(),
        meanDifferenceFromGeneration: z.number().nonnegative(),
        maxDifferenceFromGeneration: z.number().nonnegative(),
        meanDifferenceFromParent: z.number().nonnegative(),
        generationChange: z.number().nonnegative(),
        distinguishable: z.boolean(),
        /**
         * With replicas (`roles.executor.replicas`): each replica's figures, in the configured order; the figures
         * above are then the replica farthest from the generation's. Absent for one server.
         */
        replicas: z
          .array(
            z.object({
              baseUrl: z.string(),
              meanDifferenceFromGeneration: z.number().nonnegative(),
              maxDifferenceFromGeneration: z.number().nonnegative(),
              meanDifferenceFromParent: z.number().nonnegative(),
            }),
          )
          .optional(),
      })
      .optional(),
    createdAt: z.iso.datetime(),
  })
  .refine((generation) => generation.adapterPath !== undefined || generation.mergedPath !== undefined, {
    message: 'a generation needs its weights: adapterPath, mergedPath or both',
    path: ['mergedPath'],
  });
export type ModelGeneration = z.infer<typeof ModelGeneration>;

/** The name of the generation whose full weights a generation's adapter applies to; null for the base. */
export function adapterBaseOf(generation: ModelGeneration): string | null {
  return generation.adapterBase ?? generation.parent;
}
