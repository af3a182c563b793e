import { join } from 'node:path';

import { roleEndpoints, type Endpoint, type RunConfig } from '../config/run-config.js';
import { startToyModel } from '../testing/toy-model/toy-model.js';
import { BASE_TOY_WEIGHTS, loadToyWeights, type ToyWeights } from '../testing/toy-model/weights.js';
import { deployGeneration } from '../train/deploy.js';
import { checkServedModel } from '../train/inference-server.js';
import type { ModelGeneration } from '../train/model-generation.js';
import type { ModelRegistry } from '../train/registry.js';

export type RoleEndpoints = Record<'executor' | 'judge' | 'optimizer', Endpoint>;

/** A generation being served: the endpoints every role uses while it plays them. */
export interface ServedGeneration {
  endpoints: RoleEndpoints;
  close(): Promise<void>;
}

/**
 * Starts the toy model in this process under `servedAs`, with the given weights, and points every toy role at it.
 */
export async function serveToyModel(
  config: RunConfig,
  weights: ToyWeights,
  servedAs: string,
): Promise<ServedGeneration> {
  const server = await startToyModel({
    weights,
    modelName: servedAs,
    seed: config.seed,
    faults: config.roles.executor.faults,
  });
  const onToyServer = (endpoint: Endpoint): Endpoint =>
    endpoint.provider === 'toy'
      ? { ...endpoint, provider: 'openai-compatible', baseUrl: server.baseUrl }
      : endpoint;
  return {
    endpoints: generationEndpoints(config, servedAs, onToyServer),
    close: () => server.close(),
  };
}

/**
 * The configuration's own model, for commands that run one stage (`mass search`, `mass distill`): the toy model is
 * started here with its base weights; any other endpoint is used as configured.
 */
export function serveConfiguredModel(config: RunConfig): Promise<ServedGeneration> {
  const { executor } = config.roles;
  if (executor.provider === 'toy') return serveToyModel(config, BASE_TOY_WEIGHTS, executor.model);
  return Promise.resolve({ endpoints: roleEndpoints(config), close: async () => {} });
}

/**
 * Puts a generation where the roles can reach it. The toy model is started in this process with the generation's
 * weights; a real model is deployed on the configured server (runtime LoRA loading or a restart command) and checked
 * to answer. The generation plays every role, except a role the configuration gives a model of its own (the paper's
 * ablations keep that role fixed across generations).
 */
export async function serveGeneration(options: {
  config: RunConfig;
  runDirectory: string;
  registry: ModelRegistry;
  generation: ModelGeneration;
}): Promise<ServedGeneration> {
  const { config, generation, registry } = options;
  const configured = roleEndpoints(config);

  if (configured.executor.provider === 'toy') {
    return serveToyModel(config, await loadToyWeights(generation.mergedPath!), generation.servedAs);
  }

  const server = { baseUrl: configured.executor.baseUrl!, apiKeyEnv: configured.executor.apiKeyEnv };
  if (generation.parent === null) {
    await checkServedModel(server, generation.servedAs);
  } else {
    const { deploy } = config.rsi;
    await deployGeneration({
      server,
      generation,
      parent: registry.require(generation.parent),
      method:
        deploy.kind === 'restart'
          ? {
              kind: 'restart',
              argv: deploy.argv,
              logFile: join(options.runDirectory, 'train', generation.name, 'deploy.log'),
              timeoutMs: deploy.timeoutSeconds * 1000,
            }
          : { kind: 'lora' },
    });
  }
  return {
    endpoints: generationEndpoints(config, generation.servedAs),
    close: async () => {},
  };
}

/**
 * The endpoints while a generation served as `servedAs` plays: the executor under that name, and the judge and the
 * optimizer too unless the configuration gives them a model of their own. `place` puts an endpoint where it is served.
 */
function generationEndpoints(
  config: RunConfig,
  servedAs: string,
  place: (endpoint: Endpoint) => Endpoint = (endpoint) => endpoint,
): RoleEndpoints {
  const configured = roleEndpoints(config);
  const executor = place({ ...configured.executor, model: servedAs });
  return {
    executor,
    judge: config.roles.judge ? place(configured.judge) : executor,
    optimizer: config.roles.optimizer ? place(configured.optimizer) : executor,
  };
}
