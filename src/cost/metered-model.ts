import type { Prices } from '../config/prices.js';
import type {
  CallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  TokenUsage,
} from '../model/types.js';
import { pricedUsage } from './call-cost.js';

/**
 * A model whose answers carry their cost in `usage.cost` (reported by the provider, else computed from `prices`),
 * and that hands each billed call's usage to `onUsage` (a budget's ledger) as the call ends.
 */
export function meteredModel(
  model: ChatModel,
  options: { prices?: Prices; onUsage?: (usage: TokenUsage) => Promise<void> | void },
): ChatModel {
  const price = async (response: ChatResponse): Promise<ChatResponse> => {
    if (!response.usage) return response;
    const usage = pricedUsage(response.usage, options.prices);
    await options.onUsage?.(usage);
    return { ...response, usage };
  };
  return {
    endpoint: model.endpoint,
    async complete(request: ChatRequest, callOptions?: CallOptions): Promise<ChatResponse> {
      return price(await model.complete(request, callOptions));
    },
    async *stream(request: ChatRequest, callOptions?: CallOptions): AsyncIterable<ChatStreamEvent> {
      for await (const event of model.stream(request, callOptions)) {
        yield event.type === 'finish' ? { type: 'finish', response: await price(event.response) } : event;
      }
    },
  };
}
