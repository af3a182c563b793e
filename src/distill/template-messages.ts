import { isRecord } from '../model/stream-accumulator.js';
import type { ChatMessage, MessageContent } from '../model/types.js';

/**
 * A tool call as a chat template reads it: the arguments an object, as the server's tool parser made them from the
 * model's text (Qwen3.5/3.6's template iterates them with `arguments|items`; Qwen3's prints them with `tojson`).
 */
export interface TemplateToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> | string };
}

/** A message as a chat template reads it: the content always a string. */
export interface TemplateMessage {
  role: ChatMessage['role'];
  content: string;
  reasoning_content?: string;
  tool_calls?: TemplateToolCall[];
  tool_call_id?: string;
  name?: string;
}

/**
 * Content parts become one string the way vLLM presents them to a string-content template (text parts joined
 * with a newline), so training sees what the model saw when it was served; a null content is the empty string.
 */
export function flattenContent(content: MessageContent | null | undefined): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((part) => part.type === 'text' && isRecord(part) && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/**
 * What the template is given for one message. Tool-call arguments are parsed into objects, as the server hands
 * them to the template when it renders the next request (and as the official code trains): the recorded string is
 * the server's serialisation of what the model wrote, not the text itself. Arguments that are not a JSON object
 * stay the recorded string (see `argumentsKeptAsText`): a template that prints strings as they are still renders
 * them; one that needs a mapping fails on that turn, which is then skipped and reported.
 */
export function toTemplateMessage(message: ChatMessage): TemplateMessage {
  const content = flattenContent(message.content);
  switch (message.role) {
    case 'assistant': {
      const result: TemplateMessage = { role: 'assistant', content };
      if (typeof message.reasoning_content === 'string') result.reasoning_content = message.reasoning_content;
      if (message.tool_calls && message.tool_calls.length > 0) {
        result.tool_calls = message.tool_calls.map((call) => ({
          id: call.id,
          type: call.type,
          function: { name: call.function.name, arguments: parseArguments(call.function.arguments) },
        }));
      }
      return result;
    }
    case 'tool': {
      const result: TemplateMessage = { role: 'tool', content, tool_call_id: message.tool_call_id };
      if (typeof message.name === 'string') result.name = message.name;
      return result;
    }
    default:
      return { role: message.role, content };
  }
}

/** How many of the message's tool calls kept their arguments as text (not a JSON object). */
export function argumentsKeptAsText(message: TemplateMessage): number {
  return (message.tool_calls ?? []).filter((call) => typeof call.function.arguments === 'string').length;
}

function parseArguments(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return isRecord(value) ? value : text;
}
