import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { DeploymentProbe } from '../../src/train/deployment-check.js';
import type { ModelGeneration } from '../../src/records/model-generation.js';
import { ModelRegistry } from '../../src/records/registry.js';

/** The probe a training left beside its weights: training moved each token's log-probability by 0.3 or 0.4. */
export const TRAINED_PROBE: DeploymentProbe = {
  schemaVersion: 1,
  kind: 'deployment-probe',
  tokens: [5, 9, 2, 14, 7, 3],
  parent: [-2.1, -0.7, -3.3, -1.2, -0.4],
  trained: [-1.7, -0.3, -3.0, -0.9, -0.1],
  trainedWeights: 'the parent with the adapter',
  maxGenerationChange: 0.4,
};

/**
 * What a server answers for the probe: the trained weights' log-probabilities under `mass-L1`, the parent's under
 * any other name, or the parent's for every name when it is `stale` (an adapter that did not take effect).
 */
export function probeAnswers(stale = false): (model: string) => number[] {
  return (model) => (model === 'mass-L1' && !stale ? TRAINED_PROBE.trained : TRAINED_PROBE.parent);
}

/**
 * A run whose registry holds L0 (served as `qwen3`) and L1 trained over it (served as `mass-L1`), with the trainer's
 * probe in `train/L1/probe.json` (default `TRAINED_PROBE`). L1 is an adapter whose folder is made, or, given
 * `mergedPath`, the merged weights there.
 */
export async function trainedRun(
  runDirectory: string,
  options: { probe?: DeploymentProbe; mergedPath?: string } = {},
): Promise<{ registry: ModelRegistry; l1: ModelGeneration }> {
  const trainDirectory = join(runDirectory, 'train', 'L1');
  const weights = options.mergedPath
    ? { mergedPath: options.mergedPath }
    : { adapterPath: join(trainDirectory, 'checkpoints', 'step-000004') };
  mkdirSync(weights.adapterPath ?? trainDirectory, { recursive: true });
  writeFileSync(join(trainDirectory, 'probe.json'), JSON.stringify(options.probe ?? TRAINED_PROBE));
  const registry = await ModelRegistry.open(runDirectory);
  await registry.addBase({ model: 'Qwen/Qwen3-8B', servedAs: 'qwen3' });
  const l1 = await registry.addTrained({
    name: 'L1',
    parent: 'L0',
    datasetId: 'distill/L0/dataset',
    servedAs: 'mass-L1',
    result: { ...weights, metrics: null as never, logFile: join(runDirectory, 'train.log') },
  });
  return { registry, l1 };
}
