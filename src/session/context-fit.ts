import type { Endpoint, RunConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';
import { HARNESS_PROMPT_TOKENS, harnessWindow } from '../harness/context-window.js';
import { judgeSystemPrompt, judgeUserPrompt } from '../judge/judge-prompt.js';
import { apiKeyFrom } from '../model/create-model.js';
import { recognisedProvider } from '../model/provider.js';
import { OpenAICompatibleModel } from '../model/openai-compatible.js';
import type { TokenCounter } from '../model/token-counter.js';
import { judgeCriteria } from '../optimizer/judge-criteria.js';
import { buildOptimizerPrompt } from '../optimizer/optimizer-prompt.js';
import { loadTask, type LoadedTask } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';

/**
 * Fits a run's budgets into the context each role's model is served with. The configured `contextWindowSize` is a
 * claim; vLLM lists the truth (`max_model_len` in `/v1/models`), and a request whose prompt and `max_tokens` exceed it
 * is refused with a 400. So each role's context is the smaller of the two (the configured one alone where the server
 * lists none: OpenAI, Anthropic, servers other than vLLM), and:
 *
 * - the harness's context setting is lowered so that qwen-code compacts its history before a prompt and one call's
 *   output bound overflow the served context;
 * - the judge's two bundles, its prompt (task and instructions) and its output bound must fit, for every task;
 * - the optimizer's workspace evidence, its prompt (task, v0 design, instructions) and its output bound must fit.
 *
 * Budgets that cannot fit are one clear error naming them, before any episode runs.
 */

type Role = 'executor' | 'judge' | 'optimizer';

interface RoleContext {
  /** The context the role's requests must fit in. */
  tokens: number;
  /** Where it comes from: the server's listing or the configuration. */
  source: 'served' | 'configured';
  /** What the server lists, when it lists something. */
  served: number | null;
}

export interface ContextFit {
  /** The configuration with `budgets.contextWindowSize` set to the harness's fitted context. */
  config: RunConfig;
  roles: Record<Role, RoleContext>;
  /** The context setting the harness (qwen-code) is given. */
  harnessContextWindow: number;
}

interface ContextFitOptions {
  config: RunConfig;
  /** The endpoint each role uses now (a generation's served name, the address its host serves it at). */
  endpoints: Record<Role, Endpoint>;
  /** The tasks the run works on: the judge's and optimizer's prompts are measured on each. */
  tasks: readonly LoadedTask[];
  tokenCounter: TokenCounter;
  /** Reads what an endpoint lists; default `servedContextLength`. */
  readServed?: (endpoint: Endpoint) => Promise<number | null>;
}

/** Reads each role's served context, fits the harness's setting, and refuses budgets that cannot fit. */
export async function fitServedContext(options: ContextFitOptions): Promise<ContextFit> {
  const { config, endpoints } = options;
  const readServed = options.readServed ?? servedContextLength;
  const configured = config.budgets.contextWindowSize;
  const cache = new Map<string, Promise<number | null>>();
  const roleContext = async (endpoint: Endpoint): Promise<RoleContext> => {
    const key = `${endpoint.baseUrl ?? endpoint.provider}\n${endpoint.model}`;
    let served = cache.get(key);
    if (!served) {
      served = readServed(endpoint);
      cache.set(key, served);
    }
    const listed = await served;
    return listed !== null && listed < configured
      ? { tokens: listed, source: 'served', served: listed }
      : { tokens: configured, source: 'configured', served: listed };
  };
  const roles: Record<Role, RoleContext> = {
    executor: await roleContext(endpoints.executor),
    judge: await roleContext(endpoints.judge),
    optimizer: await roleContext(endpoints.optimizer),
  };
  const problems = [
    ...executorProblems(config, roles.executor),
    ...judgeProblems(options, roles.judge),
    ...optimizerProblems(options, roles.optimizer),
  ];
  if (problems.length > 0) {
    throw new UserError(`the budgets do not fit the models' context:\n  ${problems.join('\n  ')}`);
  }
  const harnessContextWindow = harnessWindow(roles.executor.tokens, config.budgets.maxOutputTokensPerCall);
  return {
    config: { ...config, budgets: { ...config.budgets, contextWindowSize: harnessContextWindow } },
    roles,
    harnessContextWindow,
  };
}

/**
 * The context length an OpenAI-compatible server lists for the endpoint's model (vLLM's `max_model_len`), or null:
 * OpenAI's and Anthropic's APIs list none, nor do servers other than vLLM, nor one that does not list the model.
 */
export async function servedContextLength(
  endpoint: Pick<Endpoint, 'provider' | 'baseUrl' | 'model' | 'apiKeyEnv'> & { maxConcurrency?: number },
): Promise<number | null> {
  if (!endpoint.baseUrl) return null;
  if (recognisedProvider(endpoint.provider, endpoint.baseUrl) !== 'openai-compatible') return null;
  const model = new OpenAICompatibleModel({
    baseUrl: endpoint.baseUrl,
    apiKey: apiKeyFrom(endpoint.apiKeyEnv),
    retry: { maxAttempts: 2 },
    timeoutMs: 60_000,
    // The endpoint's limit is set by its first client in the process: this one must not set another.
    maxConcurrency: endpoint.maxConcurrency,
  });
  try {
    const served = await model.servedModels();
    return served.find((entry) => entry.id === endpoint.model)?.maxModelLength ?? null;
  } catch {
    // A server without a model listing lists no length either; one that is down fails the run's first call, which
    // says so in the run's own terms.
    return null;
  }
}

function describe(role: Role, context: RoleContext): string {
  return context.source === 'served'
    ? `the ${role}'s server lists max_model_len ${context.tokens}`
    : `the ${role}'s context is budgets.contextWindowSize ${context.tokens}`;
}

function executorProblems(config: RunConfig, context: RoleContext): string[] {
  const { maxOutputTokensPerCall } = config.budgets;
  const room = context.tokens - maxOutputTokensPerCall;
  if (room >= HARNESS_PROMPT_TOKENS) return [];
  return [
    `executor: ${describe('executor', context)}; budgets.maxOutputTokensPerCall ${maxOutputTokensPerCall} leaves ${room} tokens for the conversation, and the harness's own prompt needs ${HARNESS_PROMPT_TOKENS}: set maxOutputTokensPerCall to at most ${context.tokens - HARNESS_PROMPT_TOKENS}, or serve a longer context`,
  ];
}

function judgeProblems(options: ContextFitOptions, context: RoleContext): string[] {
  const { judgeBundleTokens, judgeMaxTokens } = options.config.budgets;
  const counter = options.tokenCounter;
  const problems: string[] = [];
  for (const task of options.tasks) {
    const prompt =
      counter.count(judgeSystemPrompt(task.judge)) +
      counter.count(judgeUserPrompt({ taskText: renderTaskPrompt(task), bundleA: '', bundleB: '' }));
    const need = prompt + 2 * judgeBundleTokens + judgeMaxTokens;
    if (need <= context.tokens) continue;
    const bundleFits = Math.floor((context.tokens - prompt - judgeMaxTokens) / 2);
    problems.push(
      `judge, task ${task.manifest.id}: its prompt (${prompt} tokens), two bundles of budgets.judgeBundleTokens ${judgeBundleTokens} and budgets.judgeMaxTokens ${judgeMaxTokens} need ${need} tokens, but ${describe('judge', context)}: ${
        bundleFits > 0
          ? `set judgeBundleTokens to at most ${bundleFits}, or lower judgeMaxTokens`
          : 'lower judgeMaxTokens and judgeBundleTokens'
      }`,
    );
  }
  return problems;
}

function optimizerProblems(options: ContextFitOptions, context: RoleContext): string[] {
  const { optimizerEvidenceTokens, optimizerMaxTokens } = options.config.budgets;
  const counter = options.tokenCounter;
  const problems: string[] = [];
  for (const task of options.tasks) {
    const design = task.manifest.workflow;
    const prompt = buildOptimizerPrompt({
      task: { id: task.manifest.id, prompt: renderTaskPrompt(task) },
      current: { label: 'v0', design },
      original: design,
      history: [],
      judge: judgeCriteria(task.judge),
      nextMatch: {
        version: 'v1',
        opponent: { label: 'reference', bare: true },
        champion: { label: 'reference', bare: true },
        rule: options.config.search.championRule,
        judgeMode: options.config.search.judgeMode,
      },
    });
    // The smallest prompt the optimizer is sent: the first call, before any history. The workspace excerpts it is
    // shown (the current design's, and the one it is judged against) share optimizerEvidenceTokens.
    const promptTokens = counter.count(prompt.system) + counter.count(prompt.user);
    const need = promptTokens + optimizerEvidenceTokens + optimizerMaxTokens;
    if (need <= context.tokens) continue;
    problems.push(
      `optimizer, task ${task.manifest.id}: its first prompt (${promptTokens} tokens), budgets.optimizerEvidenceTokens ${optimizerEvidenceTokens} and budgets.optimizerMaxTokens ${optimizerMaxTokens} need ${need} tokens, but ${describe('optimizer', context)}: lower optimizerMaxTokens or optimizerEvidenceTokens`,
    );
  }
  return problems;
}

/** `fitServedContext` for a command: the tasks read from their folders, the fitted configuration returned. */
export async function fitRunConfig(
  config: RunConfig,
  endpoints: Record<Role, Endpoint>,
  taskDirs: readonly string[],
  tokenCounter: TokenCounter,
): Promise<RunConfig> {
  const tasks = await Promise.all(taskDirs.map((dir) => loadTask(dir)));
  return (await fitServedContext({ config, endpoints, tasks, tokenCounter })).config;
}
