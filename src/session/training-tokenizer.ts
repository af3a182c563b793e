import path from 'node:path';

import type { RunConfig } from '../config/run-config.js';
import { familyOfModelName } from '../distill/tokenizer-family.js';
import { isFile } from '../tasks/file-kind.js';
import type { ModelRegistry } from '../records/registry.js';

/** What a generation's training data is tokenised with, and the model it must match. */
export interface TrainingTokenizer {
  /** The model directory of the chat template and tokenizer; undefined for the default (Qwen3's). */
  modelDirectory: string | undefined;
  /** The base model's name: trained generations are served under names of the run's, which tell no family. */
  servedModel: string;
  allowTokenizerMismatch: boolean;
}

/**
 * The tokenizer of one generation's training data: `rsi.modelDirectory` when configured; else the generation's
 * own full weights when they are a directory holding the tokenizer files (a base model given as a directory, a
 * merged generation saved with its parent's tokenizer), else its parent's, up to the base; else Qwen3's files,
 * which the data builder accepts only for a model not known to be of another family. `anyTokenizer`: the model's
 * kind reads text, not tokens (`ModelKind.anyTokenizer`), so any tokenizer is allowed for it.
 */
export async function trainingTokenizer(
  config: RunConfig,
  registry: ModelRegistry,
  generation: string,
  anyTokenizer: boolean,
): Promise<TrainingTokenizer> {
  const { executor } = config.roles;
  const servedModel =
    familyOfModelName(executor.model) === undefined && config.rsi.baseModel !== undefined
      ? config.rsi.baseModel
      : executor.model;
  return {
    modelDirectory: config.rsi.modelDirectory ?? (await weightsDirectory(config, registry, generation)),
    servedModel,
    allowTokenizerMismatch: (config.rsi.allowTokenizerMismatch ?? false) || anyTokenizer,
  };
}

async function weightsDirectory(
  config: RunConfig,
  registry: ModelRegistry,
  generation: string,
): Promise<string | undefined> {
  const candidates: string[] = [];
  for (
    let entry = registry.get(generation);
    entry;
    entry = entry.parent ? registry.get(entry.parent) : undefined
  ) {
    if (entry.mergedPath !== undefined) candidates.push(entry.mergedPath);
  }
  // Before the base is registered (a distillation without the loop), the configured base model.
  if (candidates.length === 0 && config.rsi.baseModel !== undefined) candidates.push(config.rsi.baseModel);
  for (const candidate of candidates) {
    if (await isFile(path.join(candidate, 'tokenizer_config.json'))) return path.resolve(candidate);
  }
  return undefined;
}
