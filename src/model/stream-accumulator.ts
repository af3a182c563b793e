import type { AssistantMessage, ToolCall, WireUsage } from './types.js';

/** A streamed chat completion put back together, in the wire format of a non-streamed response's choice. */
export interface ReassembledCompletion {
  id: string | null;
  model: string | null;
  message: AssistantMessage;
  finish_reason: string | null;
  usage: WireUsage | null;
  /** Further choices, only when the request asked for more than one (`n > 1`). */
  other_choices?: Array<{ index: number; message: AssistantMessage; finish_reason: string | null }>;
}

interface ChoiceState {
  content: string;
  hasContent: boolean;
  reasoning: string;
  toolCalls: Map<number, { id: string; name: string; arguments: string }>;
  finishReason: string | null;
}

/**
 * Reassembles `chat.completion.chunk` objects into one assistant message: content and reasoning concatenated
 * (vLLM's `reasoning_content` and the newer `reasoning` alike), tool calls merged by index, the last
 * finish reason and usage kept. Unlike the SDK's accumulator it never drops reasoning split across chunks.
 */
export class StreamAccumulator {
  private id: string | null = null;
  private model: string | null = null;
  private usage: WireUsage | null = null;
  private readonly choices = new Map<number, ChoiceState>();
  chunkCount = 0;

  push(chunk: unknown): void {
    if (!isRecord(chunk)) return;
    this.chunkCount++;
    if (typeof chunk.id === 'string' && this.id === null) this.id = chunk.id;
    if (typeof chunk.model === 'string' && this.model === null) this.model = chunk.model;
    if (isRecord(chunk.usage)) this.usage = chunk.usage as WireUsage;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isRecord(choice)) continue;
      const state = this.choiceState(typeof choice.index === 'number' ? choice.index : 0);
      if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isRecord(delta)) continue;
      if (typeof delta.content === 'string') {
        state.content += delta.content;
        state.hasContent = true;
      }
      if (typeof delta.reasoning_content === 'string') state.reasoning += delta.reasoning_content;
      else if (typeof delta.reasoning === 'string') state.reasoning += delta.reasoning;
      if (Array.isArray(delta.tool_calls)) this.mergeToolCalls(state, delta.tool_calls);
    }
  }

  result(): ReassembledCompletion {
    const ordered = [...this.choices.entries()].sort(([a], [b]) => a - b);
    const [first, ...rest] = ordered.map(([index, state]) => ({
      index,
      message: toMessage(state),
      finish_reason: state.finishReason,
    }));
    const completion: ReassembledCompletion = {
      id: this.id,
      model: this.model,
      message: first?.message ?? { role: 'assistant', content: null },
      finish_reason: first?.finish_reason ?? null,
      usage: this.usage,
    };
    if (rest.length > 0) completion.other_choices = rest;
    return completion;
  }

  private choiceState(index: number): ChoiceState {
    let state = this.choices.get(index);
    if (!state) {
      state = { content: '', hasContent: false, reasoning: '', toolCalls: new Map(), finishReason: null };
      this.choices.set(index, state);
    }
    return state;
  }

  private mergeToolCalls(state: ChoiceState, deltas: unknown[]): void {
    for (const [position, delta] of deltas.entries()) {
      if (!isRecord(delta)) continue;
      const index = typeof delta.index === 'number' ? delta.index : position;
      let call = state.toolCalls.get(index);
      if (!call) {
        call = { id: '', name: '', arguments: '' };
        state.toolCalls.set(index, call);
      }
      if (typeof delta.id === 'string' && call.id === '') call.id = delta.id;
      const fn = delta.function;
      if (isRecord(fn)) {
        // The protocol sends the name once, in the call's first delta; some servers repeat it later.
        if (typeof fn.name === 'string' && call.name === '') call.name = fn.name;
        if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      }
    }
  }
}

function toMessage(state: ChoiceState): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: state.hasContent ? state.content : null };
  if (state.reasoning !== '') message.reasoning_content = state.reasoning;
  if (state.toolCalls.size > 0) {
    message.tool_calls = [...state.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]): ToolCall => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
  }
  return message;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
