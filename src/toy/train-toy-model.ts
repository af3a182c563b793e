import path from 'node:path';

import { readJsonLines } from '../store/json-lines.js';
import { SftConversation } from '../records/training-records.js';
import { loadToyWeights, saveToyWeights } from './weights.js';
import { trainToyWeights, type SupervisedConversation } from './toy-trainer.js';
import { readDatasetFiles } from '../train/dataset-files.js';
import { injectedTrainer, type TrainWeights } from '../train/injected-trainer.js';
import type { Trainer } from '../train/trainer.js';

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
    messages: row.messages.map(recordedMessage),
    targets: row.metadata.targets,
  }));
}

/** The export's tool-call arguments are objects (what chat templates read); the toy reads the recorded text form. */
function recordedMessage(
  message: SftConversation['messages'][number],
): SupervisedConversation['messages'][number] {
  if (!message.tool_calls) return message as SupervisedConversation['messages'][number];
  return {
    ...message,
    role: 'assistant',
    tool_calls: message.tool_calls.map((call) => ({
      ...call,
      function: {
        name: call.function.name,
        arguments:
          typeof call.function.arguments === 'string'
            ? call.function.arguments
            : JSON.stringify(call.function.arguments),
      },
    })),
  };
}
