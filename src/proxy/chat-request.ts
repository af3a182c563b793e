import { isRecord } from '../model/stream-accumulator.js';
import type { ParsedJson } from './sse-recorder.js';

/**
 * Why a chat-completions body is not forwarded, or null when it is. The proxy meters a call by the usage the
 * upstream reports, which it asks for on every stream (`stream_options.include_usage`): a body the proxy cannot read
 * as the upstream will (not JSON, not an object, a `stream` that is not a boolean but that a lenient server would
 * take as true) could stream an answer the proxy neither meters nor reassembles.
 */
export function chatRequestProblem(parsed: ParsedJson): string | null {
  if (!parsed.ok) return 'the body is not JSON';
  const body = parsed.value;
  if (!isRecord(body)) return 'the body must be a JSON object';
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return '"stream" must be true or false';
  }
  const options = body.stream_options;
  if (options !== undefined && options !== null) {
    if (!isRecord(options)) return '"stream_options" must be an object';
    if (options.include_usage !== undefined && typeof options.include_usage !== 'boolean') {
      return '"stream_options.include_usage" must be true or false';
    }
  }
  if (body.model !== undefined && typeof body.model !== 'string') return '"model" must be a string';
  return null;
}

/**
 * What goes upstream for a checked chat request: the body as parsed, written again (what is forwarded is what was
 * checked and is recorded), with stream usage asked for when `meterStreams` and the client did not ask.
 */
export function forwardedChatBody(
  body: Record<string, unknown>,
  meterStreams: boolean,
): { stream: boolean; upstreamBody: Buffer; usageInjected: boolean } {
  const stream = body.stream === true;
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  if (stream && meterStreams && streamOptions.include_usage !== true) {
    const forwarded = { ...body, stream_options: { ...streamOptions, include_usage: true } };
    return { stream, upstreamBody: Buffer.from(JSON.stringify(forwarded)), usageInjected: true };
  }
  return { stream, upstreamBody: Buffer.from(JSON.stringify(body)), usageInjected: false };
}
