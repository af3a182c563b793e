import type * as AnthropicSdkModule from '@anthropic-ai/sdk';
import type Anthropic from '@anthropic-ai/sdk';

import { endpointSemaphore, type Semaphore } from './concurrency.js';
import { DEFAULT_RETRY_POLICY, withRetries, type CallFailure, type RetryPolicy } from './retry.js';
import { anthropicParameters } from './request-parameters.js';
import { describeSdkFailure } from './sdk-failure.js';
import { isRecord } from './stream-accumulator.js';
import type {
  AssistantMessage,
  CallOptions,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  MessageContent,
  ToolCall,
} from './types.js';

type AnthropicSdk = typeof AnthropicSdkModule;

export interface AnthropicOptions {
  apiKey?: string;
  /** Default: Anthropic's API. */
  baseUrl?: string;
  timeoutMs?: number;
  maxConcurrency?: number;
  /** Anthropic requires an output bound; used when a request gives none (default 8192). */
  defaultMaxTokens?: number;
  retry?: Partial<RetryPolicy>;
  onRetry?: (failure: CallFailure, attempt: number, delayMs: number) => void;
}

type AnthropicBlock = Record<string, unknown> & { type: string };
interface AnthropicTurn {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/**
 * A `ChatModel` on Anthropic's Messages API, for a role played by a Claude model (an external judge, the optimizer
 * ablation). It is sent `max_tokens`, thinking and effort, never sampling parameters (`request-parameters.ts`).
 * Requests and answers are translated to and from the chat-completions shape. `stream` yields the whole answer once
 * it has arrived: judges need complete verdicts, not tokens as they come.
 */
export class AnthropicModel implements ChatModel {
  readonly endpoint: string;
  private readonly baseUrl: string;
  private loaded: Promise<{ client: Anthropic; sdk: AnthropicSdk }> | undefined;
  private readonly semaphore: Semaphore;
  private readonly retryPolicy: RetryPolicy;

  constructor(private readonly options: AnthropicOptions = {}) {
    this.baseUrl = options.baseUrl ?? 'https://api.anthropic.com';
    this.endpoint = `anthropic ${this.baseUrl}`;
    this.semaphore = endpointSemaphore(this.baseUrl, options.maxConcurrency ?? 16);
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  async complete(request: ChatRequest, options: CallOptions = {}): Promise<ChatResponse> {
    // Built before any call: settings Anthropic refuses are the caller's mistake, not worth a retry.
    const body = this.requestBody(request);
    const { client, sdk } = await this.sdkClient();
    const release = await this.semaphore.acquire();
    try {
      return await withRetries(
        async () => {
          const message: unknown = await client.messages.create(body as never, {
            signal: options.signal,
          });
          return responseFromMessage(message, request.model);
        },
        {
          policy: this.retryPolicy,
          endpoint: this.endpoint,
          model: request.model,
          signal: options.signal,
          describe: (error) => describeSdkFailure(error, sdk),
          onRetry: this.options.onRetry,
        },
      );
    } finally {
      release();
    }
  }

  async *stream(request: ChatRequest, options?: CallOptions): AsyncIterable<ChatStreamEvent> {
    const response = await this.complete(request, options);
    if (response.message.reasoning_content)
      yield { type: 'reasoning-delta', delta: response.message.reasoning_content };
    if (typeof response.message.content === 'string' && response.message.content !== '') {
      yield { type: 'text-delta', delta: response.message.content };
    }
    for (const [index, call] of (response.message.tool_calls ?? []).entries()) {
      yield {
        type: 'tool-call-delta',
        index,
        id: call.id,
        name: call.function.name,
        argumentsDelta: call.function.arguments,
      };
    }
    yield { type: 'finish', response };
  }

  /**
   * The SDK and its client, made on the first call: the SDK is some 260 files, which every command that builds its
   * models would otherwise load, for a role most runs never give to Claude.
   */
  private sdkClient(): Promise<{ client: Anthropic; sdk: AnthropicSdk }> {
    this.loaded ??= import('@anthropic-ai/sdk').then((sdk) => ({
      sdk,
      client: new sdk.default({
        apiKey: this.options.apiKey ?? null,
        baseURL: this.baseUrl,
        timeout: this.options.timeoutMs ?? 10 * 60_000,
        maxRetries: 0,
      }),
    }));
    return this.loaded;
  }

  private requestBody(request: ChatRequest): Record<string, unknown> {
    const sampling = request.sampling ?? {};
    const system = request.messages
      .filter((message) => message.role === 'system')
      .map((message) => contentText(message.content))
      .join('\n\n');
    const body: Record<string, unknown> = {
      model: request.model,
      messages: anthropicTurns(request.messages),
      ...anthropicParameters(sampling, this.options.defaultMaxTokens ?? 8192),
    };
    if (system !== '') body.system = system;
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        name: tool.function.name,
        description: tool.function.description ?? '',
        input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
      }));
      if (request.toolChoice === 'required') body.tool_choice = { type: 'any' };
      if (request.toolChoice === 'none') body.tool_choice = { type: 'none' };
    }
    return body;
  }
}

/** Chat-completions messages as Anthropic turns: tool results become user turns, same-role neighbours merge. */
export function anthropicTurns(messages: ChatMessage[]): AnthropicTurn[] {
  const turns: AnthropicTurn[] = [];
  const add = (role: AnthropicTurn['role'], blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        add('user', textBlocks(message.content));
        break;
      case 'tool':
        add('user', [
          { type: 'tool_result', tool_use_id: message.tool_call_id, content: contentText(message.content) },
        ]);
        break;
      case 'assistant': {
        // Earlier reasoning is not sent back: Anthropic accepts only thinking blocks it signed itself.
        const blocks = message.content === null ? [] : textBlocks(message.content);
        for (const call of message.tool_calls ?? []) {
          blocks.push({
            type: 'tool_use',
            id: call.id,
            name: call.function.name,
            input: parseArguments(call.function.arguments),
          });
        }
        add('assistant', blocks);
      }
    }
  }
  return turns;
}

function textBlocks(content: MessageContent): AnthropicBlock[] {
  const text = contentText(content);
  return text === '' ? [] : [{ type: 'text', text }];
}

function contentText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part)))
    .join('\n');
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { _unparsed_arguments: text };
  }
}

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
};

function responseFromMessage(message: unknown, requestedModel: string): ChatResponse {
  if (!isRecord(message) || !Array.isArray(message.content)) {
    throw new Error('the Anthropic response is not a message');
  }
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of message.content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
  };
  if (reasoning !== '') assistant.reasoning_content = reasoning;
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  const usage = isRecord(message.usage) ? message.usage : {};
  const promptTokens = typeof usage.input_tokens === 'number' ? usage.input_tokens : 0;
  const completionTokens = typeof usage.output_tokens === 'number' ? usage.output_tokens : 0;
  const details = isRecord(usage.output_tokens_details) ? usage.output_tokens_details : {};
  const reasoningTokens = typeof details.thinking_tokens === 'number' ? details.thinking_tokens : 0;
  const stopReason = typeof message.stop_reason === 'string' ? message.stop_reason : null;
  return {
    id: typeof message.id === 'string' ? message.id : '',
    model: typeof message.model === 'string' ? message.model : requestedModel,
    message: assistant,
    finishReason: stopReason === null ? null : (STOP_REASONS[stopReason] ?? stopReason),
    usage: {
      promptTokens,
      completionTokens,
      reasoningTokens,
      totalTokens: promptTokens + completionTokens,
    },
  };
}
