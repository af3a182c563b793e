import path from 'node:path';

import { generationEndpoints, isUnaddressed, type Endpoint } from '../config/endpoint.js';
import type { FaultPlan } from '../config/fault-plan.js';
import type { RunConfig } from '../config/run-config.js';
import type { ModelHost, ServedGeneration } from '../train/model-host.js';
import type { ModelGeneration } from '../records/model-generation.js';
import { startToyModel } from './toy-model.js';
import { BASE_TOY_WEIGHTS, loadToyWeights, saveToyWeights, type ToyWeights } from './weights.js';
import { TOY_WEIGHTS_FILE } from './train-toy-model.js';

/**
 * The toy model's host: each generation is started in this process, on a loopback port, with its weights file, and
 * every role without an address of its own (`isUnaddressed`) is pointed at it. A worker on another machine could not reach it
 * (`model-kind.ts` refuses the queue for it).
 */
export function toyHost(config: RunConfig, faults: FaultPlan | undefined): ModelHost {
  const start = async (weights: ToyWeights, servedAs: string): Promise<ServedGeneration> => {
    const server = await startToyModel({ weights, modelName: servedAs, seed: config.seed, faults });
    const place = (endpoint: Endpoint): Endpoint =>
      isUnaddressed(endpoint) ? { ...endpoint, baseUrl: server.baseUrl } : endpoint;
    return { endpoints: generationEndpoints(config, servedAs, place), close: () => server.close() };
  };
  const serveGeneration = async (generation: ModelGeneration) =>
    start(await loadToyWeights(generation.mergedPath!), generation.servedAs);
  return {
    standIn: 'toy',
    checkRounds: () => {},
    async baseWeights(runDirectory) {
      const file = path.join(runDirectory, 'train', 'L0', TOY_WEIGHTS_FILE);
      await saveToyWeights(file, BASE_TOY_WEIGHTS);
      return file;
    },
    serveBase: () => start(BASE_TOY_WEIGHTS, config.roles.executor.model),
    serve: serveGeneration,
    reach: serveGeneration,
    async place(endpoint) {
      if (!isUnaddressed(endpoint)) return { endpoint, close: async () => {} };
      // A judge's verdicts do not depend on the weights: the base weights serve it.
      const server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: endpoint.model });
      return {
        endpoint: { ...endpoint, baseUrl: server.baseUrl },
        close: () => server.close(),
      };
    },
  };
}
