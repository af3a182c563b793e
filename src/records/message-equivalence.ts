import { canonicalJson } from '../canonical-json.js';
import { contentText } from '../harness/qwen-code.js';
import type { AssistantMessage, ChatMessage, ToolCall } from '../model/types.js';

/**
 * Whether two messages say the same thing, as a harness echoes a conversation back: it may re-serialise tool-call
 * arguments (`{"a": 1}` becomes `{"a":1}`), send an empty string for a null content, or split text into parts.
 * Reasoning is not compared: harnesses differ in whether they send it back.
 */
export function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  if (a.role !== b.role) return false;
  if (contentText(a.content).trim() !== contentText(b.content).trim()) return false;
  if (a.role === 'tool' && b.role === 'tool') return a.tool_call_id === b.tool_call_id;
  if (a.role === 'assistant' && b.role === 'assistant')
    return sameToolCalls(a.tool_calls ?? [], b.tool_calls ?? []);
  return true;
}

function sameToolCalls(a: ToolCall[], b: ToolCall[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (call, index) =>
        call.function.name === b[index]!.function.name &&
        sameArguments(call.function.arguments, b[index]!.function.arguments),
    )
  );
}

function sameArguments(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
  } catch {
    return false;
  }
}

/** Whether `next` continues `previous` + `reply`: the earlier conversation and the reply, then more. */
export function continuesConversation(
  previous: ChatMessage[],
  reply: ChatMessage,
  next: ChatMessage[],
): boolean {
  if (next.length <= previous.length) return false;
  for (let index = 0; index < previous.length; index++) {
    if (!sameMessage(previous[index]!, next[index]!)) return false;
  }
  return sameMessage(reply, next[previous.length]!);
}

/**
 * A key equal for two assistant messages exactly when `sameMessage` holds for them: their text, and their tool calls'
 * names and arguments (parsed and canonical when JSON, as sent otherwise). Lets a whole episode's responses be looked
 * up at once rather than compared one by one.
 */
export function assistantMessageKey(message: Pick<AssistantMessage, 'content' | 'tool_calls'>): string {
  return JSON.stringify([contentText(message.content).trim(), toolCallsKey(message.tool_calls ?? [])]);
}

/** A key equal for two lists of tool calls exactly when they have the same names and arguments, in order. */
export function toolCallsKey(calls: ToolCall[]): string {
  return JSON.stringify(calls.map((call) => [call.function.name, argumentsKey(call.function.arguments)]));
}

function argumentsKey(text: string): string {
  try {
    return `json:${canonicalJson(JSON.parse(text))}`;
  } catch {
    return `text:${text}`;
  }
}
