import type { Prices } from '../config/prices.js';
import type {
  CallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  TokenUsage,
} from '../model/types.js';
import { billedUsageOf, markBilled } from '../model/billed-usage.js';
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
  /** A call that failed after billed attempts: those are counted, and its error carries them priced. */
  const failed = async (error: unknown): Promise<unknown> => {
    const billed = billedUsageOf(error);
    if (billed) {
      const usage = pricedUsage(billed, options.prices);
      markBilled(error, usage);
      await options.onUsage?.(usage);
    }
    return error;
  };
  return {
    endpoint: model.endpoint,
    async complete(request: ChatRequest, callOptions?: CallOptions): Promise<ChatResponse> {
      let response: ChatResponse;
      try {
        response = await model.complete(request, callOptions);
      } catch (error) {
        throw await failed(error);
      }
      return price(response);
    },
    async *stream(request: ChatRequest, callOptions?: CallOptions): AsyncIterable<ChatStreamEvent> {
      for await (const event of model.stream(request, callOptions)) {
        yield event.type === 'finish' ? { type: 'finish', response: await price(event.response) } : event;
      }
    },
  };
}
