import { z } from 'zod';

import { UserError } from '../errors.js';
import { describeIssues } from '../store/describe-issues.js';

const PositiveInteger = z.number().int().positive();

/**
 * The training recipe. Defaults are the paper's (MASS.md §4) where it states them; the others say where they come
 * from. Every back-end gets the whole resolved object: the Python script reads all of it, an external command gets it
 * as a JSON file and a few placeholders.
 */
export const TrainingHyperparameters = z
  .object({
    loraRank: PositiveInteger.default(64),
    loraAlpha: z.number().positive().default(128),
    loraDropout: z.number().min(0).max(1).default(0.05),
    /**
     * The last part of the names of the linear layers LoRA goes on, looked for in the language model only (never a
     * vision tower): attention and MLP projections as Qwen-style checkpoints name them, and the linear-attention
     * projections of Qwen3.5/3.6. A name the model does not have is passed over; one that matches nothing at all
     * is an error.
     */
    loraTargetModules: z
      .array(z.string().min(1))
      .min(1)
      .default([
        'q_proj',
        'k_proj',
        'v_proj',
        'o_proj',
        'gate_proj',
        'up_proj',
        'down_proj',
        'in_proj_qkv',
        'in_proj_z',
        'out_proj',
      ]),
    learningRate: z.number().positive().default(3e-5),
    adamBetas: z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]).default([0.9, 0.95]),
    /** Not stated in the paper; 0 is the usual choice for LoRA. */
    weightDecay: z.number().min(0).default(0),
    warmupSteps: z.number().int().nonnegative().default(5),
    /** Cosine decay ends at this fraction of the learning rate, on the last step. */
    minLearningRateRatio: z.number().min(0).max(1).default(0.1),
    /** Not stated in the paper; transformers' default. */
    maxGradNorm: z.number().positive().default(1),
    steps: PositiveInteger.default(1624),
    /**
     * Windows per optimizer step (gradient accumulation over one window at a time): the official `paper`
     * configuration's 3 replicas with accumulation 1.
     */
    batchSize: PositiveInteger.default(3),
    /**
     * How a step's windows make one loss. `window` (the official code's): each window's mean over its labelled
     * tokens, then the mean over the windows, so a short orchestrator window weighs as much as a long subagent one,
     * as the sampler meant; `token`: the mean over every labelled token of the step, so a window weighs what it
     * holds. Validation loss is normalised the same way.
     */
    lossNormalization: z.enum(['window', 'token']).default('window'),
    /** The sampler's chance of a task's orchestrator windows (src/distill/window-sampler.ts). */
    orchestratorProbability: z
      .number()
      .min(0)
      .max(1)
      .default(1 / 3),
    /** Validation loss every this many steps, and after the last. */
    evalEvery: PositiveInteger.default(150),
    /** An adapter checkpoint every this many steps, and after the last; a multiple of `evalEvery`. */
    checkpointEvery: PositiveInteger.default(150),
    /**
     * Labelled positions per chunk of the chunked cross-entropy: the loss is computed over this many positions at a
     * time, so the logits of a whole window (tokens × vocabulary) are never held at once. Changes memory, not the loss.
     */
    lossChunkSize: PositiveInteger.default(512),
    /**
     * Steps between resume states (optimizer, scheduler, sampler position, adapter): a training killed between two
     * is continued from the last one (`--resume`, and the redo of `mass rsi`'s training step).
     */
    resumeEvery: PositiveInteger.default(50),
    /** Merge the lowest-validation-loss checkpoint into the parent (the paper's recipe: a fresh LoRA each round). */
    mergeIntoParent: z.boolean().default(true),
    gradientCheckpointing: z.boolean().default(true),
    dtype: z.enum(['bfloat16', 'float16', 'float32']).default('bfloat16'),
  })
  .strict()
  .superRefine((hyper, context) => {
    if (hyper.checkpointEvery % hyper.evalEvery !== 0) {
      context.addIssue({
        code: 'custom',
        path: ['checkpointEvery'],
        message: `${hyper.checkpointEvery} is not a multiple of evalEvery ${hyper.evalEvery}: every checkpoint needs a validation loss to be chosen by`,
      });
    }
  });
export type TrainingHyperparameters = z.infer<typeof TrainingHyperparameters>;

/** The paper's recipe with the given fields replaced; a wrong field is named in the error. */
export function resolveHyperparameters(
  overrides: Partial<TrainingHyperparameters> = {},
): TrainingHyperparameters {
  const result = TrainingHyperparameters.safeParse(overrides);
  if (!result.success) {
    throw new UserError(`training hyperparameters: ${describeIssues(result.error)}`);
  }
  return result.data;
}
