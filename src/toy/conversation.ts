import { contentText, firstUserMessage, userPromptText } from '../harness/qwen-code.js';
import type { ChatMessage } from '../model/types.js';

/** What a toy role needs to know of its conversation so far. */
export interface ConversationView {
  /** The prompt the thread was started with (the user's text, without the harness's reminders). */
  prompt: string;
  /** The whole first user message, reminders included (they name the working directory). */
  firstMessageText: string;
  /** Assistant turns so far: the index of the turn to answer. */
  turn: number;
  /** The text of the last tool result, if the last message is one. */
  lastToolOutput?: string;
}

export function viewConversation(messages: ChatMessage[]): ConversationView {
  const first = firstUserMessage(messages);
  const last = messages.at(-1);
  const content = first?.content ?? '';
  return {
    prompt: userPromptText(content),
    firstMessageText: contentText(content),
    turn: messages.filter((message) => message.role === 'assistant').length,
    ...(last?.role === 'tool' ? { lastToolOutput: contentText(last.content) } : {}),
  };
}

/** The assistant's calls of one tool, each with its arguments (parsed) and its result, in order. */
export function toolCallsOf(
  messages: ChatMessage[],
  toolName: string,
): Array<{ arguments: Record<string, unknown>; result?: string }> {
  const results = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'tool') results.set(message.tool_call_id, contentText(message.content));
  }
  const calls: Array<{ arguments: Record<string, unknown>; result?: string }> = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) {
      if (call.function.name !== toolName) continue;
      const result = results.get(call.id);
      calls.push({
        arguments: parseArguments(call.function.arguments),
        ...(result === undefined ? {} : { result }),
      });
    }
  }
  return calls;
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
