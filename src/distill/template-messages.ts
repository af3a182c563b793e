import { isRecord } from '../model/stream-accumulator.js';
import type { ChatMessage, MessageContent, ToolCall } from '../model/types.js';

/** A message as a chat template reads it: the content always a string. */
export interface TemplateMessage {
  role: ChatMessage['role'];
  content: string;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
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
 * What the template is given for one message. Tool-call arguments stay the strings the model's server recorded
 * (for vLLM the same text its template would print from the parsed object), so the supervised text is exactly
 * the recorded output.
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
          function: { name: call.function.name, arguments: call.function.arguments },
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
