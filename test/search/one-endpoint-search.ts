import { RunConfig } from '../../src/config/run-config.js';
import type { ChatModel } from '../../src/model/types.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { SearchSettings } from '../../src/search/search-context.js';
import { searchTasks, type SearchSummary, type SearchTasksOptions } from '../../src/search/search-tasks.js';
import { openRun, type Run } from '../../src/store/run-store.js';

/**
 * The in-process search of the search tests: one OpenAI-compatible server plays the executor, the judge and the
 * optimizer under one model name. What a test sets is what it is about; the rest is the tests' common ground.
 */

/** A run named `name` over `suite`, its executor the server's `model`, with `config`'s other sections. */
export function openSearchRun(options: {
  runsDirectory: string;
  name: string;
  suite: string;
  model: string;
  baseUrl: string;
  config?: Record<string, unknown>;
}): Run<RunConfig> {
  const { runsDirectory, name, suite, model, baseUrl } = options;
  return openRun({
    runsDirectory,
    name,
    configSchema: RunConfig,
    config: { name, suite, roles: { executor: { model, baseUrl } }, ...options.config },
  });
}

export interface OneEndpointSearch extends Omit<
  SearchTasksOptions,
  'generation' | 'concurrency' | 'executor' | 'judge' | 'optimizer' | 'settings'
> {
  baseUrl: string;
  model: string;
  /** Default L0. */
  generation?: string;
  /** Default: one task, two episodes and two judgments at once. */
  concurrency?: SearchTasksOptions['concurrency'];
  /** The judge's and the optimizer's client; default a plain one for `baseUrl`. */
  chat?: ChatModel;
  /** The judge's and the optimizer's reply bound; default 4,000 tokens. */
  maxTokens?: number;
  /** Default: the paper's champion rule, random orders, one repair of each role's reply. */
  settings: Pick<SearchSettings, 'iterations' | 'seed'> & {
    timeoutSeconds: number;
  } & Partial<SearchSettings>;
}

/** `searchTasks` on one endpoint: every task's data seed is `settings.seed`, as is every episode's sampling seed. */
export function searchOneEndpoint(options: OneEndpointSearch): Promise<SearchSummary> {
  const { baseUrl, model, chat, maxTokens, settings, ...rest } = options;
  const { timeoutSeconds, ...chosen } = settings;
  const client = chat ?? new OpenAICompatibleModel({ baseUrl });
  const sampling = { temperature: 0.6, topP: 0.95, topK: 20, maxTokens: maxTokens ?? 4000 };
  return searchTasks({
    ...rest,
    generation: options.generation ?? 'L0',
    concurrency: options.concurrency ?? { tasks: 1, episodes: 2, judgments: 2 },
    executor: { model, baseUrl },
    judge: { model: client, modelName: model, sampling },
    optimizer: { model: client, modelName: model, sampling },
    settings: {
      championRule: 'paper',
      judgeMode: 'random',
      judgeRepairAttempts: 1,
      optimizerRepairAttempts: 1,
      dataSeeds: { seed: settings.seed, tasks: {} },
      episode: { timeoutSeconds },
      ...chosen,
    },
  });
}
