import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { RunConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';
import { deploySetting } from '../config/rsi-settings.js';
import {
  compareDeployment,
  PROBE_FILE,
  PROBE_TOLERANCE,
  readDeploymentProbe,
  type DeploymentComparison,
} from '../train/deployment-check.js';
import type { InferenceServer } from '../train/inference-server.js';
import type { ModelGeneration } from '../records/model-generation.js';
import { ModelRegistry } from '../records/registry.js';
import { executorServers } from './replica-serving.js';

/** The deployment check of a generation on every replica: what `mass rsi` runs after a deployment, and `mass doctor
 * --check-generation` on demand. */

/** What the registry keeps of a passed check (`deploymentCheck`). */
export type DeploymentCheckRecord = NonNullable<ModelGeneration['deploymentCheck']>;

export interface GenerationCheck {
  generation: string;
  weights: 'bf16' | 'fp8';
  probeFile: string;
  /** Each replica's comparison, in the configured order. */
  replicas: Array<{ baseUrl: string; comparison: DeploymentComparison }>;
  /** The first replica's failure; null when every replica answers as the generation. */
  mismatch: string | null;
  /** The figures as the registry keeps them: the replica farthest from the generation, and each replica's. */
  record: DeploymentCheckRecord;
}

/**
 * Where a generation's probe is, and the weights it checks: the FP8 export's (`train/<name>/fp8/probe.json`) when
 * the run deploys FP8, else the trainer's (`train/<name>/probe.json`).
 */
export function generationProbeFile(
  config: RunConfig,
  runDirectory: string,
  generation: string,
): { probeFile: string; weights: 'bf16' | 'fp8' } {
  const deploy = deploySetting(config.rsi);
  const fp8 = deploy.kind === 'restart' && deploy.format === 'fp8';
  const trainDirectory = join(runDirectory, 'train', generation);
  return {
    probeFile: join(fp8 ? join(trainDirectory, 'fp8') : trainDirectory, PROBE_FILE),
    weights: fp8 ? 'fp8' : 'bf16',
  };
}

/** True when the trainer left a probe for the generation (a training command of yours may leave none). */
export function hasProbe(probeFile: string): boolean {
  return existsSync(probeFile);
}

/**
 * Asks every replica for the probe's log-probabilities under the generation's served name and compares each with
 * the trained weights' and the parent's, within the configured tolerance (or the one its weights justify).
 */
export async function checkGenerationOnReplicas(options: {
  config: RunConfig;
  generation: ModelGeneration;
  servers: readonly InferenceServer[];
  probeFile: string;
  weights: 'bf16' | 'fp8';
  signal?: AbortSignal;
}): Promise<GenerationCheck> {
  const { generation, weights } = options;
  const probe = await readDeploymentProbe(options.probeFile);
  const tolerance = deploySetting(options.config.rsi).checkTolerance ?? PROBE_TOLERANCE[weights];
  const replicas = [];
  for (const server of options.servers) {
    const comparison = await compareDeployment({
      server,
      servedAs: generation.servedAs,
      generation: generation.name,
      parent: generation.parent ?? 'none',
      probe,
      tolerance,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    replicas.push({ baseUrl: server.baseUrl, comparison });
  }
  const worst = replicas.reduce((farthest, replica) =>
    replica.comparison.check.meanDifferenceFromGeneration >
    farthest.comparison.check.meanDifferenceFromGeneration
      ? replica
      : farthest,
  );
  const record: DeploymentCheckRecord = {
    ...worst.comparison.check,
    at: new Date().toISOString(),
    weights,
    ...(replicas.length > 1
      ? {
          replicas: replicas.map(({ baseUrl, comparison: { check } }) => ({
            baseUrl,
            meanDifferenceFromGeneration: check.meanDifferenceFromGeneration,
            maxDifferenceFromGeneration: check.maxDifferenceFromGeneration,
            meanDifferenceFromParent: check.meanDifferenceFromParent,
          })),
        }
      : {}),
  };
  return {
    generation: generation.name,
    weights,
    probeFile: options.probeFile,
    replicas,
    mismatch: replicas.find((replica) => replica.comparison.mismatch !== null)?.comparison.mismatch ?? null,
    record,
  };
}

/**
 * `mass doctor --check-generation`: the deployment check of a registered generation against what the executor's
 * servers serve now, each replica in turn (nothing is deployed or recorded).
 */
export async function checkRegisteredGeneration(options: {
  config: RunConfig;
  runDirectory: string;
  generation: string;
}): Promise<GenerationCheck> {
  const { config, runDirectory } = options;
  const registry = await ModelRegistry.open(runDirectory);
  const generation = registry.require(options.generation);
  if (generation.parent === null) {
    throw new UserError(
      `${generation.name} is the base model: the deployment check compares a trained generation with its parent; name one of ${registry
        .list()
        .filter((other) => other.parent !== null)
        .map((other) => other.name)
        .join(', ')}`,
    );
  }
  const { probeFile, weights } = generationProbeFile(config, runDirectory, generation.name);
  if (!hasProbe(probeFile)) {
    throw new UserError(
      `no deployment probe for ${generation.name}: ${probeFile} is missing (the bundled python trainer leaves it beside its weights; a training command of yours may not)`,
    );
  }
  return checkGenerationOnReplicas({
    config,
    generation,
    servers: executorServers(config),
    probeFile,
    weights,
  });
}

/** The check in lines: what was compared, then each replica's verdict and figures. */
export function describeGenerationCheck(check: GenerationCheck): string {
  const first = check.replicas[0]!.comparison.check;
  const lines = [
    `deployment check of ${check.generation} (served as ${first.servedAs}, ${check.weights} weights): probe ${check.probeFile}, ${first.tokens} tokens, tolerance ${first.tolerance}`,
  ];
  for (const { baseUrl, comparison } of check.replicas) {
    const verdict = comparison.mismatch === null ? 'serves the generation' : 'MISMATCH';
    lines.push(`  ${baseUrl}: ${verdict}: ${comparison.figures}`);
    if (!comparison.check.distinguishable) {
      lines.push(
        '    training moved the probe less than the tolerance: this server cannot be told from the parent',
      );
    }
  }
  if (check.mismatch !== null) lines.push(check.mismatch);
  return lines.join('\n');
}
