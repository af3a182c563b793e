import { isOpenAIHost } from './base-url.js';
import type { ChatProvider } from './request-parameters.js';

/** The provider whose API the endpoint speaks: an `openai-compatible` one on api.openai.com is OpenAI's own. */
export function recognisedProvider(
  provider: ChatProvider | undefined,
  baseUrl: string | undefined,
): ChatProvider {
  if (provider === 'anthropic' || provider === 'openai') return provider;
  return baseUrl !== undefined && isOpenAIHost(baseUrl) ? 'openai' : 'openai-compatible';
}
