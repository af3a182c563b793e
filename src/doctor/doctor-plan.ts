import { endpointAddresses, roleEndpoints, type Endpoint, type RoleEndpoints } from '../config/endpoint.js';
import { deploySetting } from '../config/rsi-settings.js';
import { resolveSampling } from '../config/role-sampling.js';
import type { RunConfig } from '../config/run-config.js';
import { recognisedProvider } from '../model/provider.js';
import type { SamplingParams } from '../model/types.js';

/**
 * Which endpoints of a run configuration `mass doctor` checks, and what each must do: every distinct server and model
 * once, with the roles that use it; each replica of a model (`replicas`) is a server of its own. The team's endpoint (the executor, an evaluation's models) must return tool calls
 * structured and stream usage; an endpoint where a role thinks must return its reasoning apart; the executor's takes
 * runtime LoRA adapters when the run deploys them so.
 */
export interface EndpointUnderCheck {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  maxConcurrency: number;
  /** Who uses it: `executor`, `judge`, `optimizer`, `evaluation judge <name>`, `evaluation model <name>`. */
  roles: string[];
  /** The team runs here (in qwen-code): tool calls, streamed usage and throughput matter. */
  team: boolean;
  /** Some role here samples with thinking on (`enableThinking`). */
  thinking: boolean;
  /** The sampling of the first role here (the executor's where it is one): the seed check samples with it. */
  sampling: SamplingParams;
  /** `rsi.deploy` is `lora`: mass loads each trained generation's adapter into this server. */
  runtimeLora: boolean;
}

/** An endpoint on a hosted API (OpenAI's, Anthropic's): its flags are not ours to check. */
export interface EndpointNotProbed {
  provider: string;
  model: string;
  roles: string[];
}

export interface DoctorPlan {
  endpoints: EndpointUnderCheck[];
  notProbed: EndpointNotProbed[];
  /** The executor's calls at once, what the throughput check measures besides one call alone. */
  teamConcurrency: number;
  /** Tokens an episode is assumed to write, for episodes per hour. */
  episodeOutputTokens: number;
  episodeOutputTokensSource: string;
  loraRank: number;
}

/**
 * Output tokens of a typical episode when the configuration bounds none (`budgets.episodeOutputBudget`): an
 * orchestrator and a few subagents of some twenty calls each, at one to two thousand tokens a call, thinking included.
 */
export const TYPICAL_EPISODE_OUTPUT_TOKENS = 100_000;

/** The LoRA rank of the paper's recipe (`src/train/hyperparameters.ts`). */
const DEFAULT_LORA_RANK = 64;

export interface PlanOptions {
  /** The endpoints each role uses now (a model host's addresses); default the configuration's. */
  roles?: RoleEndpoints;
  /** Check the evaluation's judges and models too (`mass eval`, `mass doctor`). */
  evaluation?: boolean;
  /**
   * The model's kind deploys trained generations as adapters into the executor's server (`ModelKind.runtimeLora`);
   * default: `rsi.deploy` is lora.
   */
  runtimeLora?: boolean;
}

export function doctorPlan(config: RunConfig, options: PlanOptions = {}): DoctorPlan {
  const roles = options.roles ?? roleEndpoints(config);
  const byKey = new Map<string, EndpointUnderCheck>();
  const notProbed = new Map<string, EndpointNotProbed>();
  const lora = options.runtimeLora ?? deploySetting(config.rsi).kind === 'lora';
  const add = (
    role: string,
    endpoint: Endpoint,
    maxTokens: number,
    use: { team: boolean; runtimeLora: boolean },
  ) => {
    const provider = recognisedProvider(endpoint.provider, endpoint.baseUrl);
    const key = `${endpoint.baseUrl ?? provider}\n${endpoint.model}`;
    // Without an address, the run's model host serves it (the toy model): nothing of it is configured by hand.
    if (provider === 'openai-compatible' && endpoint.baseUrl === undefined) return;
    if (provider !== 'openai-compatible' || endpoint.baseUrl === undefined) {
      const entry = notProbed.get(key) ?? { provider, model: endpoint.model, roles: [] };
      entry.roles.push(role);
      notProbed.set(key, entry);
      return;
    }
    const sampling = resolveSampling(provider, config.sampling, endpoint.sampling, maxTokens);
    for (const baseUrl of endpointAddresses(endpoint)) {
      const existing = byKey.get(`${baseUrl}\n${endpoint.model}`);
      if (existing) {
        existing.roles.push(role);
        existing.team ||= use.team;
        existing.thinking ||= sampling.enableThinking === true;
        existing.runtimeLora ||= use.runtimeLora;
        if (use.team) existing.sampling = sampling;
        continue;
      }
      byKey.set(`${baseUrl}\n${endpoint.model}`, {
        baseUrl,
        model: endpoint.model,
        apiKeyEnv: endpoint.apiKeyEnv,
        maxConcurrency: endpoint.maxConcurrency,
        roles: [role],
        team: use.team,
        thinking: sampling.enableThinking === true,
        sampling,
        runtimeLora: use.runtimeLora,
      });
    }
  };
  const { budgets } = config;
  add('executor', roles.executor, budgets.maxOutputTokensPerCall, { team: true, runtimeLora: lora });
  add('judge', roles.judge, budgets.judgeMaxTokens, { team: false, runtimeLora: false });
  add('optimizer', roles.optimizer, budgets.optimizerMaxTokens, { team: false, runtimeLora: false });
  if (options.evaluation && config.evaluation) {
    for (const [index, judge] of config.evaluation.judges.entries()) {
      add(`evaluation judge ${judge.name ?? index}`, judge, budgets.judgeMaxTokens, {
        team: false,
        runtimeLora: false,
      });
    }
    for (const model of config.evaluation.models ?? []) {
      add(`evaluation model ${model.name}`, model.endpoint, budgets.maxOutputTokensPerCall, {
        team: true,
        runtimeLora: false,
      });
    }
  }
  const budget = budgets.episodeOutputBudget;
  const rank = config.rsi.hyperparameters?.loraRank;
  return {
    endpoints: [...byKey.values()],
    notProbed: [...notProbed.values()],
    teamConcurrency: roles.executor.maxConcurrency,
    episodeOutputTokens: budget ?? TYPICAL_EPISODE_OUTPUT_TOKENS,
    episodeOutputTokensSource:
      budget === undefined
        ? `an assumed ${TYPICAL_EPISODE_OUTPUT_TOKENS.toLocaleString('en-US')} output tokens per episode (set budgets.episodeOutputBudget to use yours)`
        : `budgets.episodeOutputBudget ${budget.toLocaleString('en-US')} output tokens per episode (a bound: typical episodes write less)`,
    loraRank: typeof rank === 'number' ? rank : DEFAULT_LORA_RANK,
  };
}
