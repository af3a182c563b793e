import type { ServerResponse } from 'node:http';

import { isRecord } from '../model/stream-accumulator.js';
import { anthropicMessage, wireChunks, wireCompletion, type WireReplyContext } from './openai-wire.js';
import type { ReceivedRequest } from './reply-server.js';
import type { ServerFlags } from './server-flags.js';
import type { ReplySpec, Step } from './steps.js';

/** What a reply server lends the playing of its steps. */
export interface Playback {
  /** Names the server in its error messages. */
  name: string;
  /** The responses left hanging, for the server to destroy when it closes. */
  hanging: Set<ServerResponse>;
  /** Characters per streamed delta unless a step says (default 16). */
  chunkSize?: number;
  flags: ServerFlags;
}

/**
 * One step of a reply server on the wire: a hang, an error status, malformed JSON, a reply (whole, streamed or cut
 * mid-stream), or a connection dropped or truncated after some chunks.
 */
export async function playStep(
  playback: Playback,
  step: Step,
  request: ReceivedRequest,
  context: WireReplyContext,
  anthropic: boolean,
  response: ServerResponse,
): Promise<void> {
  if (step.kind === 'hang') {
    playback.hanging.add(response);
    response.on('close', () => playback.hanging.delete(response));
    return;
  }
  if (step.delayMs) await sleep(step.delayMs);
  if (response.destroyed) return;

  switch (step.kind) {
    case 'status': {
      const headers: Record<string, string> = {};
      if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
      sendJson(
        response,
        step.status,
        { error: { message: step.message ?? `${playback.name} failure ${step.status}`, code: step.status } },
        headers,
      );
      return;
    }
    case 'malformed':
      if (request.stream) {
        startStream(response);
        response.end(`data: {"id": "${playback.name}", "choices": [{"delta": {"content": "unterminated\n\n`);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(`{"id": "${playback.name}", "choices": [ not json`);
      }
      return;
    case 'reply':
      if (step.cutAfterChunks !== undefined) {
        await cutReply(playback, step.reply, step.cutAfterChunks, step.chunkSize, request, context, response);
        return;
      }
      if (anthropic) {
        sendJson(response, 200, anthropicMessage(step.reply, context));
        return;
      }
      if (!request.stream) {
        sendJson(response, 200, wireCompletion(step.reply, context));
        return;
      }
      await streamChunks(
        response,
        request,
        wireChunks(step.reply, context, chunkOptions(playback, request, step.chunkSize)),
        {
          chunkDelayMs: step.chunkDelayMs,
        },
      );
      return;
    case 'drop':
    case 'truncate': {
      const fullReply = {
        content: 'This reply is cut short by the server on purpose.',
        reasoning: 'thinking',
      };
      if (step.afterChunks === 0 && step.kind === 'drop') {
        // Before any response byte, the response head included: a connection reset.
        response.socket?.destroy();
        return;
      }
      if (!request.stream) {
        writeHalfCompletion(response, fullReply, context);
        if (step.kind === 'drop') response.socket?.destroy();
        else response.end();
        return;
      }
      const chunks = wireChunks(fullReply, context, { chunkSize: 4, includeUsage: false });
      await streamChunks(response, request, chunks.slice(0, step.afterChunks), {
        end: step.kind === 'truncate' ? 'end' : 'destroy',
      });
    }
  }
}

/** The head of a whole (not streamed) answer and the first half of its body, the connection left open. */
function writeHalfCompletion(response: ServerResponse, reply: ReplySpec, context: WireReplyContext): void {
  const text = JSON.stringify(wireCompletion(reply, context));
  response.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.write(text.slice(0, Math.floor(text.length / 2)));
}

/** Sends the first part of a real answer, then drops the connection: a server dying mid-answer. */
async function cutReply(
  playback: Playback,
  reply: ReplySpec,
  cutAfter: number | 'half',
  chunkSize: number | undefined,
  request: ReceivedRequest,
  context: WireReplyContext,
  response: ServerResponse,
): Promise<void> {
  if (!request.stream) {
    writeHalfCompletion(response, reply, context);
    await sleep(5);
    response.socket?.destroy();
    return;
  }
  const chunks = wireChunks(reply, context, chunkOptions(playback, request, chunkSize));
  const kept = cutAfter === 'half' ? Math.max(1, Math.floor(chunks.length / 2)) : cutAfter;
  await streamChunks(response, request, chunks.slice(0, kept), { end: 'destroy' });
}

function chunkOptions(playback: Playback, request: ReceivedRequest, chunkSize?: number) {
  const body = isRecord(request.body) ? request.body : {};
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  return {
    chunkSize: chunkSize ?? playback.chunkSize ?? 16,
    includeUsage: streamOptions.include_usage === true && playback.flags.streamUsage !== false,
  };
}

async function streamChunks(
  response: ServerResponse,
  _request: ReceivedRequest,
  chunks: object[],
  options: { chunkDelayMs?: number; end?: 'done' | 'end' | 'destroy' },
): Promise<void> {
  startStream(response);
  for (const chunk of chunks) {
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
  }
  const end = options.end ?? 'done';
  if (end === 'destroy') {
    // Let the written chunks reach the client before the connection dies.
    await sleep(5);
    response.socket?.destroy();
  } else if (end === 'end') response.end();
  else response.end('data: [DONE]\n\n');
}

export function startStream(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.flushHeaders();
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
