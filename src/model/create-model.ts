import { UserError } from '../errors.js';
import { AnthropicModel } from './anthropic.js';
import { OpenAICompatibleModel } from './openai-compatible.js';
import type { ChatModel } from './types.js';

export interface EndpointConfig {
  provider?: 'openai-compatible' | 'anthropic';
  /** For OpenAI-compatible servers, ending in `/v1`. */
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
  if (config.provider === 'anthropic') {
    return new AnthropicModel({
      apiKey,
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs,
      maxConcurrency: config.maxConcurrency,
    });
  }
  if (!config.baseUrl)
    throw new UserError(
      'an OpenAI-compatible endpoint needs a base URL (e.g. --base-url http://127.0.0.1:8000/v1)',
    );
  return new OpenAICompatibleModel({
    baseUrl: config.baseUrl,
    apiKey,
    timeoutMs: config.timeoutMs,
    maxConcurrency: config.maxConcurrency,
  });
}
