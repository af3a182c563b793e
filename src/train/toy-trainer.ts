import path from 'node:path';

import { readJsonLines } from '../distill/read-json-lines.js';
import { SftConversation } from '../distill/training-records.js';
import { loadToyWeights, saveToyWeights } from '../testing/toy-model/weights.js';
import { trainToyWeights, type SupervisedConversation } from '../testing/toy-model/toy-trainer.js';
import { readDatasetFiles } from './dataset-files.js';
import { injectedTrainer, type TrainWeights } from './injected-trainer.js';
import type { Trainer } from './trainer.js';

/** The toy model's weights file in a generation's training folder. */
export const TOY_WEIGHTS_FILE = 'toy-weights.json';

/**
 * Trains the toy model (`mass demo`): its behaviour probabilities move towards those its selected trajectories show,
 * read from the same conversation export an SFT trainer reads. Stands in for the GPU trainer so that every other part
 * of a generation runs for real.
 */
export const trainToyModel: TrainWeights = async (parentWeightsPath, datasetDir, outDir) => {
  const dataset = await readDatasetFiles(datasetDir);
  const conversations = await readConversations(dataset.train.conversations);
  const parent = await loadToyWeights(parentWeightsPath);
  const trained = trainToyWeights(parent, conversations);
  const weightsPath = path.join(outDir, TOY_WEIGHTS_FILE);
  await saveToyWeights(weightsPath, trained);
  return {
    weightsPath,
    metrics: {
      steps: 1,
      supervisedTokensProcessed: dataset.stats.splits.train.total.supervisedTokens,
    },
  };
};

export function toyTrainer(): Trainer {
  return injectedTrainer(trainToyModel, 'toy');
}

async function readConversations(file: string): Promise<SupervisedConversation[]> {
  const rows = await readJsonLines(file, SftConversation, 'a training conversation');
  return rows.map((row) => ({
    role: row.metadata.role,
    messages: row.messages as SupervisedConversation['messages'],
    targets: row.metadata.targets,
  }));
}
