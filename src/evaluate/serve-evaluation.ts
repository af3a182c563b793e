import { UserError } from '../errors.js';
import type { Endpoint, RunConfig } from '../config/run-config.js';
import { apiKeyFrom } from '../model/create-model.js';
import type { ChatModel, SamplingParams } from '../model/types.js';
import { roleModel, roleSampling } from '../search/search-config.js';
import { startToyModel } from '../testing/toy-model/toy-model.js';
import { BASE_TOY_WEIGHTS, loadToyWeights } from '../testing/toy-model/weights.js';
import { checkServedModel } from '../train/inference-server.js';
import type { EvaluatedModel, EvaluationJudge } from './evaluation-plan.js';

/** Where one model's episodes send their calls. */
export interface ServedModel {
  name: string;
  modelName: string;
  baseUrl: string;
  apiKey?: string;
  /** The variable that holds the key: what a queue's workers are told, never the key. */
  apiKeyEnv?: string;
}

export interface ServedJudge {
  name: string;
  modelName: string;
  model: ChatModel;
  sampling: SamplingParams;
  toy: boolean;
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
 * Puts every model and judge of an evaluation where it can be reached. The toy model is started in this process, once
 * per generation with that generation's weights (a toy judge with the base weights: its verdicts do not depend on
 * them); any other model must already be served, and is checked to answer under its name before anything runs.
 */
export async function serveEvaluation(
  config: RunConfig,
  models: readonly EvaluatedModel[],
  judges: readonly EvaluationJudge[],
  options: { selfJudge: boolean },
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
      const { endpoint, ...reached } = await serveModel(model, closers);
      served.set(model.name, reached);
      if (options.selfJudge) {
        selfJudges.set(model.name, {
          name: `self:${model.name}`,
          ...roleModel(endpoint, samplingOf(model.endpoint), timeout),
          toy: model.endpoint.provider === 'toy',
        });
      }
    }
    const servedJudges: ServedJudge[] = [];
    for (const judge of judges) {
      const endpoint = await judgeEndpoint(judge.endpoint, closers);
      servedJudges.push({
        name: judge.name,
        ...roleModel(endpoint, samplingOf(judge.endpoint), timeout),
        toy: judge.toy,
      });
    }
    return { models: served, judges: servedJudges, selfJudges, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Where the model's episodes go, and the endpoint it answers on (the toy model's: the server started here). */
async function serveModel(
  model: EvaluatedModel,
  closers: Array<() => Promise<void>>,
): Promise<ServedModel & { endpoint: Endpoint }> {
  const { endpoint } = model;
  if (endpoint.provider === 'toy') {
    const weights = model.toyWeights ? await loadToyWeights(model.toyWeights) : BASE_TOY_WEIGHTS;
    const server = await startToyModel({ weights, modelName: model.servedAs });
    closers.push(() => server.close());
    return {
      name: model.name,
      modelName: model.servedAs,
      baseUrl: server.baseUrl,
      endpoint: {
        ...endpoint,
        provider: 'openai-compatible',
        baseUrl: server.baseUrl,
        model: model.servedAs,
      },
    };
  }
  if (endpoint.provider !== 'openai-compatible' || !endpoint.baseUrl) {
    throw new UserError(
      `evaluation: model ${model.name} runs the team in qwen-code, which needs an OpenAI-compatible endpoint with a baseUrl`,
    );
  }
  await checkServedModel({ baseUrl: endpoint.baseUrl, apiKeyEnv: endpoint.apiKeyEnv }, model.servedAs);
  return {
    name: model.name,
    modelName: model.servedAs,
    baseUrl: endpoint.baseUrl,
    apiKey: apiKeyFrom(endpoint.apiKeyEnv),
    apiKeyEnv: endpoint.apiKeyEnv,
    endpoint: { ...endpoint, model: model.servedAs },
  };
}

async function judgeEndpoint(endpoint: Endpoint, closers: Array<() => Promise<void>>): Promise<Endpoint> {
  if (endpoint.provider !== 'toy') return endpoint;
  const server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: endpoint.model });
  closers.push(() => server.close());
  return { ...endpoint, provider: 'openai-compatible', baseUrl: server.baseUrl };
}
