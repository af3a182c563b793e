import { z } from 'zod';

import type { ReasoningEffort } from './reasoning-effort.js';

/**
 * Chat-completions types in the OpenAI wire format. Messages keep the protocol's own field names
 * (`reasoning_content`, `tool_calls`, `tool_call_id`) because they are also the trajectories we record and train on.
 */

export const ContentPart = z.looseObject({ type: z.string() });
export type ContentPart = z.infer<typeof ContentPart>;

/** A message body: a plain string or an array of content parts (qwen-code sends both). */
export const MessageContent = z.union([z.string(), z.array(ContentPart)]);
export type MessageContent = z.infer<typeof MessageContent>;

export const ToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const SystemMessage = z.looseObject({ role: z.literal('system'), content: MessageContent });
export const UserMessage = z.looseObject({ role: z.literal('user'), content: MessageContent });
export const AssistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: MessageContent.nullable(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
});
export const ToolMessage = z.looseObject({
  role: z.literal('tool'),
  content: MessageContent,
  tool_call_id: z.string(),
});
export const ChatMessage = z.discriminatedUnion('role', [
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
]);
export type SystemMessage = z.infer<typeof SystemMessage>;
export type UserMessage = z.infer<typeof UserMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolMessage = z.infer<typeof ToolMessage>;
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ToolDefinition = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ToolDefinition = z.infer<typeof ToolDefinition>;

/**
 * Sampling parameters in the provider's neutral terms. Each provider is sent only what its API accepts
 * (`src/model/request-parameters.ts`); a field it does not accept is refused before the request is sent. `extra` is
 * passed through to the request body unchanged.
 */
export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  /** The output bound: `max_tokens` (vLLM, Anthropic) or `max_completion_tokens` (OpenAI). */
  maxTokens?: number;
  stop?: string[];
  /** The chat template's thinking switch of Qwen-style models: `chat_template_kwargs.enable_thinking` (vLLM). */
  enableThinking?: boolean;
  /** OpenAI's `reasoning_effort` (also vLLM's); Anthropic's `output_config.effort`. */
  reasoningEffort?: ReasoningEffort;
  /** Anthropic's `thinking`: adaptive, disabled, or enabled with a budget of thinking tokens. */
  thinking?: AnthropicThinking;
  extra?: Record<string, unknown>;
}

export type AnthropicThinking = 'adaptive' | 'disabled' | { budgetTokens: number };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: 'auto' | 'none' | 'required';
  sampling?: SamplingParams;
}

export const FinishReason = z.string();
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | (string & {});

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Part of `completionTokens` spent on reasoning, when the server reports it. */
  reasoningTokens: number;
  totalTokens: number;
  /** Part of `promptTokens` the provider served from its prompt cache, when it reports it. */
  cachedPromptTokens?: number;
  /** What the call cost: as the provider reported it (OpenRouter's `usage.cost`), or computed from its prices. */
  cost?: CallCost;
  /** Attempts the provider billed for this call, when more than one (an answer with usage that was retried). */
  billedAttempts?: number;
}

/** A call's cost in US dollars: `reported` by the provider, or `computed` from the usage and the endpoint's prices. */
export const CallCost = z.object({
  usd: z.number().nonnegative(),
  source: z.enum(['reported', 'computed']),
});
export type CallCost = z.infer<typeof CallCost>;

export interface ChatResponse {
  id: string;
  model: string;
  message: AssistantMessage;
  finishReason: FinishReason | null;
  usage: TokenUsage | null;
}

/** Events of a streamed completion, in arrival order; the last one is always `finish`. */
export type ChatStreamEvent =
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'text-delta'; delta: string }
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'finish'; response: ChatResponse };

export interface CallOptions {
  signal?: AbortSignal;
}

/** The one interface every model provider adapts to. */
export interface ChatModel {
  /** A label for logs and errors: provider and endpoint, never a key. */
  readonly endpoint: string;
  complete(request: ChatRequest, options?: CallOptions): Promise<ChatResponse>;
  stream(request: ChatRequest, options?: CallOptions): AsyncIterable<ChatStreamEvent>;
}

/** Usage as OpenAI-compatible servers report it (vLLM, SGLang, llama.cpp, OpenAI). */
export const WireUsage = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  /** What the call cost, in the provider's credits (US dollars on OpenRouter), when it reports it. */
  cost: z.number().nullish(),
});
export type WireUsage = z.infer<typeof WireUsage>;

export function tokenUsageFromWire(usage: WireUsage | null | undefined): TokenUsage | null {
  if (!usage) return null;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const cost = usage.cost;
  return {
    promptTokens,
    completionTokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
    ...(typeof cached === 'number' && cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0
      ? { cost: { usd: cost, source: 'reported' as const } }
      : {}),
  };
}
