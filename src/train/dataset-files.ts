import { stat } from 'node:fs/promises';
import path from 'node:path';

import { UserError } from '../errors.js';
import { STATS_FILE, trainingDataFiles, type DataSplit } from '../records/training-records.js';
import { TrainingDataStats } from '../records/training-data-stats.js';

type SplitFiles = ReturnType<typeof trainingDataFiles>;

/** A finished training-data directory: absolute paths of its files and its statistics. */
export interface DatasetFiles {
  directory: string;
  stats: TrainingDataStats;
  train: SplitFiles;
  validation: SplitFiles;
}

/**
 * Checks that `directory` holds a finished build of `writeTrainingData`: `stats.json` (written last) and every
 * split's windows, index and conversations.
 */
export async function readDatasetFiles(directory: string): Promise<DatasetFiles> {
  const absolute = path.resolve(directory);
  const statsPath = path.join(absolute, STATS_FILE);
  const stats = await TrainingDataStats.readIfPresent(statsPath);
  if (stats === undefined) {
    throw new UserError(
      `${absolute} is not a finished training-data directory: it has no ${STATS_FILE}, which \`mass data build\` ` +
        'writes last. Build the data there (again).',
    );
  }
  const files = (split: DataSplit): SplitFiles => {
    const names = trainingDataFiles(split);
    return {
      windows: path.join(absolute, names.windows),
      index: path.join(absolute, names.index),
      conversations: path.join(absolute, names.conversations),
    };
  };
  const result = { directory: absolute, stats, train: files('train'), validation: files('validation') };
  for (const file of [result.train, result.validation].flatMap((split) => Object.values(split))) {
    const found = await stat(file).catch(() => undefined);
    if (!found?.isFile()) {
      throw new UserError(
        `${file} is missing from the training data; build it again with \`mass data build\``,
      );
    }
  }
  return result;
}
