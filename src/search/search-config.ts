import { meteredModel } from '../cost/metered-model.js';
import { assertDataSeedTasks, dataSeeds, type DataSeeds } from '../config/data-seeds.js';
import { episodeSettings } from '../episode/episode-settings.js';
import { outageSettings } from '../config/fault-tolerance.js';
import { UserError } from '../errors.js';
import { resolveSampling } from '../config/role-sampling.js';
import { apiKeyFrom, createChatModel } from '../model/create-model.js';
import { recognisedProvider } from '../model/provider.js';
import type { SamplingParams } from '../model/types.js';
import { isUnaddressed } from '../config/endpoint.js';
import { roleEndpoints, type Endpoint, type RunConfig } from '../config/run-config.js';
import { loadSuite } from '../tasks/load-suite.js';
import { durationMs } from '../timer-duration.js';
import type { ExecutorEndpoint, RoleModel } from '../model/role-endpoint.js';
import type { SearchSettings } from './search-context.js';

/** The search's settings as the run configuration gives them. */
export function searchSettings(config: RunConfig): SearchSettings {
  const { search } = config;
  return {
    iterations: search.iterations,
    championRule: search.championRule,
    judgeMode: search.judgeMode,
    judgeRepairAttempts: search.judgeRepairAttempts,
    optimizerRepairAttempts: search.optimizerRepairAttempts,
    stabiliser: search.stabiliser,
    repeats: search.repeats,
    seed: config.seed,
    dataSeeds: dataSeeds(config),
    episode: episodeSettings(config),
    outages: outageSettings(config),
    bundleBudget: { totalTokens: config.budgets.judgeBundleTokens },
    evidenceTokens: config.budgets.optimizerEvidenceTokens,
  };
}

/**
 * Judge and optimizer calls: what the endpoint's provider accepts of the role's own sampling block and, on
 * OpenAI-compatible servers, the run's shared sampling, with the role's output bound. Without an endpoint: the shared
 * sampling, for an OpenAI-compatible server.
 */
export function roleSampling(
  config: RunConfig,
  maxTokens: number,
  endpoint?: Pick<Endpoint, 'provider' | 'baseUrl' | 'sampling'>,
): SamplingParams {
  const provider =
    endpoint === undefined ? 'openai-compatible' : recognisedProvider(endpoint.provider, endpoint.baseUrl);
  return resolveSampling(provider, config.sampling, endpoint?.sampling, maxTokens);
}

export function roleModel(endpoint: Endpoint, sampling: SamplingParams, timeoutSeconds: number): RoleModel {
  if (isUnaddressed(endpoint)) throw notPlaced(endpoint);
  return {
    // Each answer carries its cost: the provider's, or computed from the endpoint's prices.
    model: meteredModel(createChatModel({ ...endpoint, timeoutMs: durationMs(timeoutSeconds, 's') }), {
      prices: endpoint.prices,
    }),
    modelName: endpoint.model,
    sampling,
  };
}

/**
 * The judge's and optimizer's models and the executor's endpoint; keys are read from the named variables. `endpoints`
 * default to the configuration's; a stage gives those its model host serves (an address, a trained model's name).
 */
export function searchRoles(
  config: RunConfig,
  endpoints: Record<'executor' | 'judge' | 'optimizer', Endpoint> = roleEndpoints(config),
): {
  executor: ExecutorEndpoint;
  judge: RoleModel;
  optimizer: RoleModel;
} {
  const { executor } = endpoints;
  if (isUnaddressed(executor)) throw notPlaced(executor);
  if (
    executor.provider !== 'openai-compatible' ||
    !executor.baseUrl ||
    recognisedProvider(executor.provider, executor.baseUrl) !== 'openai-compatible'
  ) {
    throw new UserError(
      'roles.executor: the team runs in qwen-code, which needs an OpenAI-compatible endpoint: set provider: openai-compatible and baseUrl',
    );
  }
  const callTimeout = config.budgets.episodeTimeoutSeconds;
  const sampling = judgeAndOptimizerSampling(config, endpoints);
  return {
    executor: {
      model: executor.model,
      baseUrl: executor.baseUrl,
      apiKey: apiKeyFrom(executor.apiKeyEnv),
      apiKeyEnv: executor.apiKeyEnv,
    },
    judge: roleModel(endpoints.judge, sampling.judge, callTimeout),
    optimizer: roleModel(endpoints.optimizer, sampling.optimizer, callTimeout),
  };
}

/**
 * The judge's and optimizer's request settings for their endpoints' providers. A role's sampling block is its own: a
 * judge playing the executor's model does not take the executor's block.
 */
export function judgeAndOptimizerSampling(
  config: RunConfig,
  endpoints: Record<'executor' | 'judge' | 'optimizer', Endpoint> = roleEndpoints(config),
): Record<'judge' | 'optimizer', SamplingParams> {
  const sampling = (role: 'judge' | 'optimizer', maxTokens: number) =>
    roleSampling(config, maxTokens, { ...endpoints[role], sampling: config.roles[role]?.sampling });
  return {
    judge: sampling('judge', config.budgets.judgeMaxTokens),
    optimizer: sampling('optimizer', config.budgets.optimizerMaxTokens),
  };
}

/**
 * The task folders to search: the configuration's list (in its order), or every train task of the suite. A data seed
 * given for a task the suite does not have is refused (one for a test task is for the evaluation).
 */
export async function searchTaskDirs(
  suiteDir: string,
  taskIds: readonly string[] | undefined,
  seeds?: DataSeeds,
): Promise<string[]> {
  const suite = await loadSuite(suiteDir);
  if (seeds) assertDataSeedTasks(seeds, suite);
  if (!taskIds) {
    const train = suite.tasks.filter((task) => task.manifest.split === 'train');
    if (train.length === 0) throw new UserError(`suite ${suite.dir} has no train tasks to search`);
    return train.map((task) => task.dir);
  }
  const known = new Map(suite.tasks.map((task) => [task.manifest.id, task.dir]));
  const unknown = taskIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new UserError(
      `tasks: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in suite ${suite.dir}. Its tasks: ${[...known.keys()].join(', ')}`,
    );
  }
  return taskIds.map((id) => known.get(id)!);
}

/** A programming error: an endpoint the host serves was used before the host gave it an address. */
function notPlaced(endpoint: Endpoint): Error {
  return new Error(`${endpoint.model}: no address yet; its model host must serve it before its role is used`);
}
