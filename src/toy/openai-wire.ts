import type { ReplySpec } from './steps.js';

/** The OpenAI chat-completions wire objects the scripted server sends for one scripted reply. */

export interface WireReplyContext {
  completionId: string;
  model: string;
  created: number;
  promptCharacters: number;
  reasoningField: 'reasoning_content' | 'reasoning';
}

interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

function resolveToolCalls(spec: ReplySpec, completionId: string): ResolvedToolCall[] {
  return (spec.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${completionId}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

const approximateTokens = (characters: number): number => Math.ceil(characters / 4);

export function wireUsage(spec: ReplySpec, context: WireReplyContext) {
  const toolCharacters = resolveToolCalls(spec, context.completionId).reduce(
    (sum, call) => sum + call.name.length + call.arguments.length,
    0,
  );
  const reasoningTokens = spec.usage?.reasoningTokens ?? approximateTokens(spec.reasoning?.length ?? 0);
  const completionTokens =
    spec.usage?.completionTokens ??
    reasoningTokens + approximateTokens((spec.content?.length ?? 0) + toolCharacters);
  const promptTokens = spec.usage?.promptTokens ?? approximateTokens(context.promptCharacters);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens_details: { reasoning_tokens: reasoningTokens },
    ...(spec.usage?.cachedTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: spec.usage.cachedTokens } }),
    ...(spec.usage?.cost === undefined ? {} : { cost: spec.usage.cost }),
  };
}

function finishReason(spec: ReplySpec): string {
  return spec.finishReason ?? ((spec.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

/** The body of a non-streamed response. */
export function wireCompletion(spec: ReplySpec, context: WireReplyContext) {
  const toolCalls = resolveToolCalls(spec, context.completionId);
  const message: Record<string, unknown> = { role: 'assistant', content: spec.content ?? null };
  if (spec.reasoning !== undefined) message[context.reasoningField] = spec.reasoning;
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: context.created,
    model: spec.model ?? context.model,
    choices: [{ index: 0, message, finish_reason: finishReason(spec), logprobs: null }],
    usage: wireUsage(spec, context),
  };
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}

/**
 * The chunks of a streamed response, in the order vLLM sends them: role, reasoning, content, tool calls
 * (id and name first, then argument pieces), the finish reason, and usage when the request asked for it.
 */
export function wireChunks(
  spec: ReplySpec,
  context: WireReplyContext,
  options: { chunkSize: number; includeUsage: boolean },
): object[] {
  const model = spec.model ?? context.model;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: context.completionId,
    object: 'chat.completion.chunk',
    created: context.created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(spec.reasoning ?? '', options.chunkSize)) {
    chunks.push(chunk({ [context.reasoningField]: piece }));
  }
  for (const piece of pieces(spec.content ?? '', options.chunkSize)) chunks.push(chunk({ content: piece }));
  for (const [index, call] of resolveToolCalls(spec, context.completionId).entries()) {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of pieces(call.arguments, options.chunkSize)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  chunks.push(chunk({}, finishReason(spec)));
  if (options.includeUsage) {
    chunks.push({
      id: context.completionId,
      object: 'chat.completion.chunk',
      created: context.created,
      model,
      choices: [],
      usage: wireUsage(spec, context),
    });
  }
  return chunks;
}

/** The body of a non-streamed Anthropic Messages response, for testing the Anthropic client offline. */
export function anthropicMessage(spec: ReplySpec, context: WireReplyContext) {
  const content: object[] = [];
  if (spec.reasoning !== undefined)
    content.push({ type: 'thinking', thinking: spec.reasoning, signature: 'scripted' });
  if (spec.content) content.push({ type: 'text', text: spec.content });
  for (const call of resolveToolCalls(spec, context.completionId)) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: JSON.parse(call.arguments) as unknown,
    });
  }
  const usage = wireUsage(spec, context);
  const reason = finishReason(spec);
  return {
    id: context.completionId,
    type: 'message',
    role: 'assistant',
    model: spec.model ?? context.model,
    content,
    stop_reason: reason === 'tool_calls' ? 'tool_use' : reason === 'length' ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
  };
}
