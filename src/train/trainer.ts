import { stat } from 'node:fs/promises';
import path from 'node:path';

import { UserError } from '../errors.js';
import type { TrainingHyperparameters } from './hyperparameters.js';
import type { ModelGeneration } from '../records/model-generation.js';
import type { TrainingResult } from '../records/training-metrics.js';

export interface TrainOptions {
  /** A directory written by `writeTrainingData` (`mass data build`). */
  dataset: string;
  /** The generation trained from: by default the LoRA goes over its full weights. */
  parent: ModelGeneration;
  /**
   * The generation whose full weights the LoRA goes over, when they are not the parent's: L0, where every
   * generation is an adapter over the base (`rsi.lineage: adapters`). Default: the parent.
   */
  base?: ModelGeneration;
  /** A PEFT adapter directory to start from instead of a fresh LoRA (the parent's adapter, over `base`). */
  initAdapter?: string;
  /** Where the back-end writes its checkpoints, weights and log; one directory per generation (`train/L<k>`). */
  outDir: string;
  seed: number;
  /** Changes to the paper's recipe. */
  hyper?: Partial<TrainingHyperparameters>;
  /**
   * Continue from the resume state an interrupted training left in `outDir` (a back-end that `resumes`); with no
   * state there, training starts from step 0. A state left by a training of another configuration is refused.
   */
  resume?: boolean;
  /**
   * With `resume`: an `outDir` left by a training of another configuration (a changed recipe, seed or parent) is
   * emptied and trained afresh instead of refused: for a caller that owns the folder (`mass rsi`'s training step).
   */
  restartIfChanged?: boolean;
  signal?: AbortSignal;
}

/** One way of turning training data and a parent into the next generation's weights. */
export interface Trainer {
  /** `python`, `command` or the injected function's name: recorded with the result. */
  readonly kind: string;
  /**
   * True when an interrupted training continues from what it left in its folder (`TrainOptions.resume`); a trainer
   * without it is given an emptied folder each time.
   */
  readonly resumes?: boolean;
  /** True when it chooses its checkpoint by validation loss, so that a dataset without validation windows is refused. */
  readonly needsValidation?: boolean;
  train(options: TrainOptions): Promise<TrainingResult>;
}

/** The full weights a new LoRA is trained over: the generation's merged (or base) model. */
export function parentWeightsOf(parent: ModelGeneration): string {
  if (parent.mergedPath === undefined) {
    throw new UserError(
      `generation ${parent.name} has only an adapter (${parent.adapterPath}), and a new LoRA is trained over full ` +
        `weights: train ${parent.name} again with mergeIntoParent (the default), merge its adapter yourself and ` +
        'register the merged model, or keep every generation an adapter over the base (rsi.lineage: adapters)',
    );
  }
  return parent.mergedPath;
}

/** The full weights a training goes over: `base`'s when given, else the parent's. */
export function trainingWeightsOf(options: Pick<TrainOptions, 'parent' | 'base'>): string {
  return parentWeightsOf(options.base ?? options.parent);
}

/**
 * The absolute path of an adapter to start from, checked to be a PEFT adapter directory (`adapter_config.json`).
 * `what` names it in errors (`--init-adapter`).
 */
export async function checkInitAdapter(
  directory: string,
  what = 'the adapter to start from',
): Promise<string> {
  const absolute = path.resolve(directory);
  const found = await stat(absolute).catch(() => undefined);
  if (!found?.isDirectory()) {
    throw new UserError(
      `${what} ${absolute} ${found ? 'is not a directory' : 'does not exist'}: give a PEFT adapter directory`,
    );
  }
  if (!(await stat(path.join(absolute, 'adapter_config.json')).catch(() => undefined))) {
    throw new UserError(
      `${what} ${absolute} is not a PEFT adapter: it has no adapter_config.json (a checkpoint of the python trainer has one)`,
    );
  }
  return absolute;
}
