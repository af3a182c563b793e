import { fitRunConfig } from './context-fit.js';
import type { RunConfig } from '../config/run-config.js';
import { checkTrainingTokenizer } from '../distill/tokenizer-family.js';
import type { ServedGeneration } from '../train/model-host.js';
import type { ModelKind } from '../hosting/model-kind.js';
import { loadTokenCounter, type TokenCounter } from '../model/token-counter.js';
import { searchRoles } from '../search/search-config.js';
import type { ModelRegistry } from '../records/registry.js';
import { trainingTokenizer, type TrainingTokenizer } from './training-tokenizer.js';

/** A stage ready to run: its generation served, its tokens counted, its budgets fitted, its roles' models. */
export interface PreparedStage {
  /** The caller closes it when the stage is done. */
  served: ServedGeneration;
  tokenizer: TrainingTokenizer;
  tokenCounter: TokenCounter;
  /** The configuration with its budgets fitted to the context the roles are served with. */
  fitted: RunConfig;
  roles: ReturnType<typeof searchRoles>;
}

/**
 * What every stage (`mass search`, `mass distill`, each generation of `mass rsi`) does before its first episode:
 * the tokenizer of the generation's data (refused, when the stage makes training data, if it cannot be the model's),
 * the generation served, a token counter of that tokenizer, the budgets fitted to the served context (or refused,
 * before any episode), and the roles' models.
 */
export async function prepareStage(options: {
  config: RunConfig;
  kind: ModelKind;
  registry: ModelRegistry;
  generation: string;
  /** The task folders the stage runs on: their prompts must fit the context. */
  taskDirs: readonly string[];
  serve: () => Promise<ServedGeneration>;
  makesTrainingData: boolean;
}): Promise<PreparedStage> {
  const { config } = options;
  const tokenizer = await stageTokenizer(options);
  const tokenCounter = await loadTokenCounter(tokenizer.modelDirectory);
  const served = await options.serve();
  try {
    const fitted = await fitRunConfig(config, served.endpoints, options.taskDirs, tokenCounter);
    return { served, tokenizer, tokenCounter, fitted, roles: searchRoles(fitted, served.endpoints) };
  } catch (error) {
    await served.close();
    throw error;
  }
}

/** The tokenizer of a generation's data; refused, when the stage makes training data, if it cannot be the model's. */
export async function stageTokenizer(options: {
  config: RunConfig;
  kind: ModelKind;
  registry: ModelRegistry;
  generation: string;
  makesTrainingData: boolean;
}): Promise<TrainingTokenizer> {
  const { config, registry, generation } = options;
  const tokenizer = await trainingTokenizer(config, registry, generation, options.kind.anyTokenizer);
  if (options.makesTrainingData) {
    await checkTrainingTokenizer({
      modelDirectory: tokenizer.modelDirectory,
      servedModels: [tokenizer.servedModel],
      allowMismatch: tokenizer.allowTokenizerMismatch,
    });
  }
  return tokenizer;
}
