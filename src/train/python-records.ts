import { z } from 'zod';

import { defineRecord } from '../store/record.js';
import { TrainingHyperparameters } from './hyperparameters.js';

const Count = z.number().int().nonnegative();
const Loss = z.number().nonnegative();

/** `report.json`, written by `python/train_lora.py` when training finished; paths relative to its directory. */
export const PythonTrainingReport = defineRecord({
  kind: 'python-training-report',
  version: 1,
  schema: z.object({
    steps: Count,
    supervisedTokensProcessed: Count,
    trainLoss: z.array(z.object({ step: Count, loss: Loss, learningRate: z.number().nonnegative() })),
    validationLoss: z.array(z.object({ step: Count, loss: Loss })),
    checkpoints: z.array(z.object({ step: Count, path: z.string().min(1), validationLoss: Loss })),
    chosenCheckpoint: z.object({ step: Count, path: z.string().min(1), validationLoss: Loss }),
    adapterPath: z.string().min(1),
    mergedPath: z.string().min(1).nullable(),
    seconds: z.number().nonnegative(),
    versions: z.record(z.string(), z.string()),
    /** The transformers class the parent was loaded (and the merged model saved) as; absent in older reports. */
    modelClass: z.string().optional(),
    /** How many linear layers got LoRA, by the last part of their name (`q_proj`, `in_proj_qkv`…). */
    loraTargets: z.record(z.string(), Count).optional(),
  }),
});
export type PythonTrainingReport = z.infer<(typeof PythonTrainingReport)['schema']>;

/** `plan.json`, written by `python/train_lora.py` before training (and alone with `--dry-run`). */
export const PythonTrainingPlan = defineRecord({
  kind: 'python-training-plan',
  version: 1,
  schema: z.object({
    parentModel: z.string(),
    seed: Count,
    hyper: TrainingHyperparameters,
    train: z.object({
      windows: Count,
      supervisedTokens: Count,
      tasks: z.record(
        z.string(),
        z.object({
          orchestratorWindows: Count,
          otherWindows: Count,
          orchestratorChance: z.number().min(0).max(1),
        }),
      ),
    }),
    validation: z.object({ windows: Count, supervisedTokens: Count }),
    drawsByRole: z.record(z.string(), Count),
    processedSupervisedTokens: Count,
    evaluationSteps: z.array(Count),
    checkpointSteps: z.array(Count),
    /** The learning rate at a few 0-based steps (first, end of warm-up, middle, last). */
    learningRates: z.record(z.string(), z.number().nonnegative()),
    /** Every window drawn, in order: `batchSize` per step. */
    draws: z.array(Count),
  }),
});
export type PythonTrainingPlan = z.infer<(typeof PythonTrainingPlan)['schema']>;
