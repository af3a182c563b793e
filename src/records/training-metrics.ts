import { z } from 'zod';

const Step = z.number().int().nonnegative();
const Loss = z.number().nonnegative();

export const Checkpoint = z.object({
  step: Step,
  /** The adapter directory, absolute once read back. */
  path: z.string().min(1),
  validationLoss: Loss.nullable(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

/**
 * What a training run reports, the same for every back-end. A back-end that cannot tell (an external command that
 * prints no metrics) leaves the counts `null` and the lists empty.
 */
export const TrainingMetrics = z.object({
  steps: Step.nullable(),
  /** Supervised tokens of every window drawn: the paper's "processed" count (28.8 M in round 1). */
  supervisedTokensProcessed: z.number().int().nonnegative().nullable(),
  /** Mean loss per labelled token, one point per logged step. */
  trainLoss: z.array(z.object({ step: Step, loss: Loss, learningRate: z.number().nonnegative().optional() })),
  validationLoss: z.array(z.object({ step: Step, loss: Loss })),
  checkpoints: z.array(Checkpoint),
  /** The lowest-validation-loss checkpoint, the one kept. */
  chosenCheckpoint: Checkpoint.nullable(),
});
export type TrainingMetrics = z.infer<typeof TrainingMetrics>;

export function emptyMetrics(): TrainingMetrics {
  return {
    steps: null,
    supervisedTokensProcessed: null,
    trainLoss: [],
    validationLoss: [],
    checkpoints: [],
    chosenCheckpoint: null,
  };
}

/** What a trainer hands back: where the new weights are (an adapter, a merged model or both), metrics, the log. */
export interface TrainingResult {
  /** A LoRA adapter over the parent's weights (absolute path). */
  adapterPath?: string;
  /** Full weights: the parent with the adapter merged in (absolute path). */
  mergedPath?: string;
  metrics: TrainingMetrics;
  /** The back-end's log (absolute path). */
  logFile: string;
}
