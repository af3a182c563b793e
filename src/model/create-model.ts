import { UserError } from '../errors.js';
import { AnthropicModel } from './anthropic.js';
import { OpenAICompatibleModel } from './openai-compatible.js';
import { recognisedProvider } from './provider.js';
import type { ChatProvider } from './request-parameters.js';
import type { ChatModel } from './types.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface EndpointConfig {
  provider?: ChatProvider;
  /** For OpenAI-compatible servers, ending in `/v1`; OpenAI's and Anthropic's own by default. */
  baseUrl?: string;
  /** The name of the environment variable that holds the key; the key itself never appears in configuration. */
  apiKeyEnv?: string;
  timeoutMs?: number;
  maxConcurrency?: number;
}

/** Reads the key from the named environment variable; a named but empty variable is the user's mistake. */
export function apiKeyFrom(
  apiKeyEnv: string | undefined,
  environment: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (apiKeyEnv === undefined) return undefined;
  const key = environment[apiKeyEnv];
  if (!key)
    throw new UserError(
      `the API key variable ${apiKeyEnv} is not set: export ${apiKeyEnv}=<key>, or drop --api-key-env`,
    );
  return key;
}

export function createChatModel(config: EndpointConfig): ChatModel {
  const apiKey = apiKeyFrom(config.apiKeyEnv);
  const provider = recognisedProvider(config.provider, config.baseUrl);
  if (provider === 'anthropic') {
    return new AnthropicModel({
      apiKey,
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs,
      maxConcurrency: config.maxConcurrency,
    });
  }
  if (provider === 'openai-compatible' && !config.baseUrl)
    throw new UserError(
      'an OpenAI-compatible endpoint needs a base URL (e.g. --base-url http://127.0.0.1:8000/v1)',
    );
  return new OpenAICompatibleModel({
    baseUrl: config.baseUrl ?? OPENAI_BASE_URL,
    dialect: provider,
    apiKey,
    timeoutMs: config.timeoutMs,
    maxConcurrency: config.maxConcurrency,
  });
}
