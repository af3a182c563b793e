import { UserError } from '../errors.js';
import { isUnaddressed } from '../config/endpoint.js';
import type { Endpoint, RunConfig } from '../config/run-config.js';
import type { ModelHost } from '../train/model-host.js';
import type { ModelRegistry } from '../records/registry.js';
import { apiKeyFrom } from '../model/create-model.js';
import type { ExecutorEndpoint, RoleModel } from '../model/role-endpoint.js';
import { roleModel, roleSampling } from '../search/search-config.js';
import { checkServedModel } from '../train/inference-server.js';
import type { EvaluatedModel, EvaluationJudge } from './evaluation-plan.js';

/** Where one model's episodes send their calls, by the name the evaluation gives the model. */
export interface ServedModel extends ExecutorEndpoint {
  name: string;
  /** What it stands in as when it is not a language model (`ModelHost.standIn`); null for a real model. */
  standIn: string | null;
}

/** A judge of the evaluation: a role's model, with the name its figures carry. */
export interface ServedJudge extends RoleModel {
  name: string;
  standIn: string | null;
}

export interface ServedEvaluation {
  models: Map<string, ServedModel>;
  /** The external judges. */
  judges: ServedJudge[];
  /** Each model judging pairs of its own episodes (`self:<name>`), when the evaluation asks for the self-judge. */
  selfJudges: Map<string, ServedJudge>;
  close(): Promise<void>;
}

/**
 * Puts every model and judge of an evaluation where it can be reached. A generation is reached through the run's
 * model host, without restarting anything (the toy model: started here with the generation's weights; an adapter
 * the server no longer holds: loaded again); a named model
 * or judge is used where it is configured, and one without an address is served by the host. Every model is checked
 * to answer under its name before anything runs.
 */
export async function serveEvaluation(
  config: RunConfig,
  host: ModelHost,
  models: readonly EvaluatedModel[],
  judges: readonly EvaluationJudge[],
  options: {
    selfJudge: boolean;
    /** The run's generations: an adapter generation the server no longer holds is loaded again over its base. */
    registry?: ModelRegistry;
  },
): Promise<ServedEvaluation> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    await Promise.all(closers.map((closer) => closer()));
  };
  try {
    // Each judge is sent what its own provider accepts (an Anthropic or OpenAI judge refuses vLLM's settings).
    const samplingOf = (endpoint: Parameters<typeof roleSampling>[2]) =>
      roleSampling(config, config.budgets.judgeMaxTokens, endpoint);
    const timeout = config.budgets.episodeTimeoutSeconds;
    const served = new Map<string, ServedModel>();
    const selfJudges = new Map<string, ServedJudge>();
    for (const model of models) {
      const { endpoint, ...reached } = await serveModel(host, model, closers, options.registry);
      served.set(model.name, reached);
      if (options.selfJudge) {
        selfJudges.set(model.name, {
          name: `self:${model.name}`,
          ...roleModel(endpoint, samplingOf(model.endpoint), timeout),
          standIn: reached.standIn,
        });
      }
    }
    const servedJudges: ServedJudge[] = [];
    for (const judge of judges) {
      const placed = await host.place(judge.endpoint);
      closers.push(placed.close);
      servedJudges.push({
        name: judge.name,
        ...roleModel(placed.endpoint, samplingOf(judge.endpoint), timeout),
        standIn: standInOf(host, judge.endpoint),
      });
    }
    return { models: served, judges: servedJudges, selfJudges, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** An endpoint the host serves (one without an address of its own) is what the host's model stands in as. */
function standInOf(host: ModelHost, configured: Endpoint): string | null {
  return isUnaddressed(configured) ? host.standIn : null;
}

/** Where the model's episodes go, and the endpoint it answers on. */
async function serveModel(
  host: ModelHost,
  model: EvaluatedModel,
  closers: Array<() => Promise<void>>,
  registry: ModelRegistry | undefined,
): Promise<ServedModel & { endpoint: Endpoint }> {
  let endpoint: Endpoint;
  let standIn: string | null;
  if (model.generation) {
    const reached = await host.reach(model.generation, registry);
    closers.push(reached.close);
    endpoint = reached.endpoints.executor;
    standIn = host.standIn;
  } else {
    const placed = await host.place(model.endpoint);
    closers.push(placed.close);
    endpoint = placed.endpoint;
    standIn = standInOf(host, model.endpoint);
  }
  if (endpoint.provider !== 'openai-compatible' || !endpoint.baseUrl) {
    throw new UserError(
      `evaluation: model ${model.name} runs the team in qwen-code, which needs an OpenAI-compatible endpoint with a baseUrl`,
    );
  }
  if (!model.generation) {
    await checkServedModel({ baseUrl: endpoint.baseUrl, apiKeyEnv: endpoint.apiKeyEnv }, model.servedAs);
  }
  return {
    name: model.name,
    model: model.servedAs,
    baseUrl: endpoint.baseUrl,
    apiKey: apiKeyFrom(endpoint.apiKeyEnv),
    apiKeyEnv: endpoint.apiKeyEnv,
    standIn,
    endpoint: { ...endpoint, model: model.servedAs },
  };
}
