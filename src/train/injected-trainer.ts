import { appendFile, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

import { SystemError, UserError, errorMessage } from '../errors.js';
import { describeIssues } from '../store/describe-issues.js';
import { readDatasetFiles } from './dataset-files.js';
import { trainingWeightsOf, type Trainer } from './trainer.js';
import { emptyMetrics, TrainingMetrics } from '../records/training-metrics.js';

/**
 * A trainer given as a function, in this process: the toy model's (`mass demo`, end-to-end tests) or a test's.
 * It gets the parent's weights, the training-data directory and its own output directory, and returns the new
 * full weights.
 */
export type TrainWeights = (
  parentWeightsPath: string,
  datasetDir: string,
  outDir: string,
) => Promise<{ weightsPath: string; metrics?: Partial<TrainingMetrics> }>;

export const INJECTED_TRAINER_LOG = 'train.log';

export function injectedTrainer(trainWeights: TrainWeights, kind = 'injected'): Trainer {
  return {
    kind,
    async train(train) {
      const dataset = await readDatasetFiles(train.dataset);
      if (train.initAdapter !== undefined) {
        throw new UserError(
          `the ${kind} trainer makes full weights and cannot start from an adapter (${train.initAdapter}): ` +
            'train it with rsi.lineage merged',
        );
      }
      const parentWeights = trainingWeightsOf(train);
      const outDir = path.resolve(train.outDir);
      await mkdir(outDir, { recursive: true });
      const logFile = path.join(outDir, INJECTED_TRAINER_LOG);
      const log = (line: string) => appendFile(logFile, `[${new Date().toISOString()}] ${line}\n`);
      train.signal?.throwIfAborted();
      await log(`${kind}: training ${parentWeights} on ${dataset.directory}`);
      let produced: Awaited<ReturnType<TrainWeights>>;
      try {
        produced = await trainWeights(parentWeights, dataset.directory, outDir);
      } catch (error) {
        await log(`failed: ${errorMessage(error)}`);
        throw error;
      }
      const weightsPath = path.resolve(outDir, produced.weightsPath);
      if (!(await stat(weightsPath).catch(() => undefined))) {
        throw new SystemError(
          `the ${kind} trainer returned ${weightsPath}, which does not exist (log: ${logFile})`,
        );
      }
      const metrics = TrainingMetrics.safeParse({ ...emptyMetrics(), ...produced.metrics });
      if (!metrics.success) {
        throw new SystemError(
          `the ${kind} trainer returned invalid metrics: ${describeIssues(metrics.error)}`,
        );
      }
      await log(`wrote ${weightsPath}`);
      return { mergedPath: weightsPath, metrics: metrics.data, logFile };
    },
  };
}
