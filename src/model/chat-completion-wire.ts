import { CallFailedError } from './retry.js';
import { chatCompletionParameters } from './request-parameters.js';
import { isRecord } from './stream-accumulator.js';
import {
  AssistantMessage,
  tokenUsageFromWire,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamEvent,
  type WireUsage,
} from './types.js';

/** The chat completions API on the wire: the body of a request, a completion read back, the events of a chunk. */

/** The request body in the dialect of the API: its messages, tools and sampling. */
export function requestBody(
  request: ChatRequest,
  dialect: 'openai-compatible' | 'openai',
): Record<string, unknown> {
  // vLLM reads earlier reasoning back through the chat template; OpenAI's API has no such message field.
  const messages =
    dialect === 'openai'
      ? request.messages.map((message) => {
          if (message.role !== 'assistant' || message.reasoning_content === undefined) return message;
          const { reasoning_content: _reasoning, ...rest } = message;
          return rest;
        })
      : request.messages;
  const body: Record<string, unknown> = { model: request.model, messages };
  if (request.tools && request.tools.length > 0) body.tools = request.tools;
  if (request.toolChoice) body.tool_choice = request.toolChoice;
  return { ...body, ...chatCompletionParameters(dialect, request.sampling ?? {}) };
}

/** A chat completion as a `ChatResponse`, or a failure saying what about it was wrong. */
export function responseFromCompletion(completion: unknown): ChatResponse {
  if (!isRecord(completion) || !Array.isArray(completion.choices)) {
    throw new CallFailedError({ kind: 'invalid-response', message: 'the response is not a chat completion' });
  }
  const choice: unknown = completion.choices[0];
  if (!isRecord(choice)) {
    throw new CallFailedError({ kind: 'model-behaviour', message: 'the response has no choices' });
  }
  const raw = isRecord(choice.message) ? choice.message : {};
  const { reasoning, ...rest } = raw;
  const candidate =
    reasoning !== undefined && rest.reasoning_content === undefined
      ? { ...rest, reasoning_content: reasoning }
      : raw;
  const parsed = AssistantMessage.safeParse({ ...candidate, content: candidate.content ?? null });
  if (!parsed.success) {
    throw new CallFailedError({
      kind: 'model-behaviour',
      message: `the message is not a valid assistant message: ${parsed.error.message}`,
    });
  }
  if (parsed.data.reasoning_content === null) delete parsed.data.reasoning_content;
  return {
    id: typeof completion.id === 'string' ? completion.id : '',
    model: typeof completion.model === 'string' ? completion.model : '',
    message: parsed.data,
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: tokenUsageFromWire(isRecord(completion.usage) ? (completion.usage as WireUsage) : null),
  };
}

/** The events one streamed chunk carries: reasoning, text and tool-call deltas. */
export function collectEvents(chunk: unknown, events: ChatStreamEvent[]): void {
  if (!isRecord(chunk) || !Array.isArray(chunk.choices)) return;
  const choice: unknown = chunk.choices[0];
  if (!isRecord(choice) || !isRecord(choice.delta)) return;
  const delta = choice.delta;
  const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '')
    events.push({ type: 'reasoning-delta', delta: reasoning });
  if (typeof delta.content === 'string' && delta.content !== '')
    events.push({ type: 'text-delta', delta: delta.content });
  if (Array.isArray(delta.tool_calls)) {
    for (const [position, call] of delta.tool_calls.entries()) {
      if (!isRecord(call)) continue;
      const fn = isRecord(call.function) ? call.function : {};
      events.push({
        type: 'tool-call-delta',
        index: typeof call.index === 'number' ? call.index : position,
        ...(typeof call.id === 'string' ? { id: call.id } : {}),
        ...(typeof fn.name === 'string' ? { name: fn.name } : {}),
        argumentsDelta: typeof fn.arguments === 'string' ? fn.arguments : '',
      });
    }
  }
}
