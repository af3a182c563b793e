import { isRecord, type ReassembledCompletion } from '../model/stream-accumulator.js';
import { AssistantMessage, type WireUsage } from '../model/types.js';
import type { RecordedResponse } from './log-row.js';
import { parseJson } from './sse-recorder.js';

/** Text bodies (error pages and the like) are kept up to this many characters. */
const MAX_TEXT_CHARACTERS = 64 * 1024;

export interface Recorder {
  /** Takes upstream bytes; returns the bytes to relay to the client now. */
  push(chunk: Buffer): Buffer;
  finish(contentType: string): { response: RecordedResponse | null; error: string | null };
}

/** Keeps a plain body as it arrives, to relay whole (with the key taken out) and to record. */
export class BodyRecorder implements Recorder {
  private readonly chunks: Buffer[] = [];

  push(chunk: Buffer): Buffer {
    this.chunks.push(chunk);
    return Buffer.alloc(0);
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  finish(contentType: string): { response: RecordedResponse | null; error: string | null } {
    const bytes = this.bytes;
    if (bytes.length === 0) return { response: null, error: null };
    const parsed = parseJson(bytes);
    if (parsed.ok) return { response: recordedJson(parsed.value), error: null };
    const text = bytes.toString('utf8');
    const response: RecordedResponse = {
      kind: 'text',
      text: text.slice(0, MAX_TEXT_CHARACTERS),
      truncated: text.length > MAX_TEXT_CHARACTERS,
    };
    return { response, error: contentType.includes('json') ? 'response body is not valid JSON' : null };
  }
}

/** A JSON answer as the log keeps it: a chat completion reassembled like a stream's, anything else as sent. */
function recordedJson(value: unknown): RecordedResponse {
  if (!isRecord(value) || value.object !== 'chat.completion' || !Array.isArray(value.choices)) {
    return { kind: 'json', body: value };
  }
  const choices = value.choices.filter(isRecord).map((choice, position) => ({
    index: typeof choice.index === 'number' ? choice.index : position,
    message: AssistantMessage.safeParse(withReasoningContent(choice.message)),
    finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
  }));
  const [first, ...rest] = choices;
  if (!first || choices.some((choice) => !choice.message.success)) return { kind: 'json', body: value };
  const completion: ReassembledCompletion = {
    id: typeof value.id === 'string' ? value.id : null,
    model: typeof value.model === 'string' ? value.model : null,
    message: first.message.data!,
    finish_reason: first.finish_reason,
    usage: isRecord(value.usage) ? (value.usage as WireUsage) : null,
  };
  if (rest.length > 0) {
    completion.other_choices = rest.map((choice) => ({ ...choice, message: choice.message.data! }));
  }
  return { kind: 'completion', completion };
}

/** Newer vLLM names the field `reasoning`; the log always says `reasoning_content`. */
function withReasoningContent(message: unknown): unknown {
  if (!isRecord(message) || !('reasoning' in message) || 'reasoning_content' in message) return message;
  const { reasoning, ...rest } = message;
  return typeof reasoning === 'string' ? { ...rest, reasoning_content: reasoning } : rest;
}
