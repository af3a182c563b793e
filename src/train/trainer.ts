import { UserError } from '../errors.js';
import type { TrainingHyperparameters } from './hyperparameters.js';
import type { ModelGeneration } from './model-generation.js';
import type { TrainingResult } from './training-metrics.js';

export interface TrainOptions {
  /** A directory written by `writeTrainingData` (`mass data build`). */
  dataset: string;
  /** The generation trained from: a fresh LoRA goes over its full weights. */
  parent: ModelGeneration;
  /** Where the back-end writes its checkpoints, weights and log; one directory per generation (`train/L<k>`). */
  outDir: string;
  seed: number;
  /** Changes to the paper's recipe. */
  hyper?: Partial<TrainingHyperparameters>;
  signal?: AbortSignal;
}

/** One way of turning training data and a parent into the next generation's weights. */
export interface Trainer {
  /** `python`, `command` or the injected function's name: recorded with the result. */
  readonly kind: string;
  train(options: TrainOptions): Promise<TrainingResult>;
}

/** The full weights a new LoRA is trained over: the parent's merged (or base) model. */
export function parentWeightsOf(parent: ModelGeneration): string {
  if (parent.mergedPath === undefined) {
    throw new UserError(
      `generation ${parent.name} has only an adapter (${parent.adapterPath}), and a new LoRA is trained over full ` +
        `weights: train ${parent.name} again with mergeIntoParent (the default), or merge its adapter yourself and ` +
        'register the merged model',
    );
  }
  return parent.mergedPath;
}
