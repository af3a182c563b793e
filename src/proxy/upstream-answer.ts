import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';

import { parseRetryAfter } from '../model/retry.js';
import type { AttemptEnd } from './attempt-end.js';
import { BodyRecorder } from './body-recorder.js';
import type { Exchange } from './exchange.js';
import {
  headerText,
  sendBody,
  type BufferedFailure,
  type RelayContext,
  type RelayedCall,
} from './relay-context.js';
import { relayedHeaders } from './relayed-headers.js';
import { SseRecorder } from './sse-recorder.js';
import type { SseSecretScrubber } from './sse-scrubber.js';
import { RETRYABLE_UPSTREAM_STATUSES } from './upstream-retry.js';

/** One attempt whose request is on its way: what answering it needs. */
export interface OpenAttempt {
  context: RelayContext;
  response: ServerResponse;
  call: RelayedCall;
  exchange: Exchange;
  upstream: ClientRequest;
  end: AttemptEnd;
  /** The stream this attempt replays, to join to what the client already has; null: a fresh answer. */
  resume: SseRecorder | null;
  sseScrubber: SseSecretScrubber | null;
}

/** What the head of the upstream's answer said. */
interface AnswerHead {
  status: number;
  contentType: string;
  isSse: boolean;
}

/**
 * The upstream's answer to one attempt: refused when compressed, kept back when its status is one to retry, else
 * relayed to the client and recorded as it comes.
 */
export function relayAnswer(attempt: OpenAttempt, answer: IncomingMessage): void {
  const { end, upstream } = attempt;
  clearTimeout(end.headTimer);
  const status = answer.statusCode ?? 502;
  const contentType = answer.headers['content-type'] ?? '';
  // Asked for `identity`: a compressed answer could carry the key past the scrubber, which reads plain bytes.
  const encoding = headerText(answer.headers['content-encoding'])?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    answer.resume();
    upstream.destroy();
    end.cutOff(
      `the model server answered in content-encoding ${encoding}, not identity as asked: not relayed`,
    );
    return;
  }
  if (RETRYABLE_UPSTREAM_STATUSES.has(status)) {
    keepBack(answer, status, attempt.context.maxResponseBytes, end);
    return;
  }
  const head: AnswerHead = { status, contentType, isSse: contentType.includes('text/event-stream') };
  end.bodyStarted = true;
  const recorder = startRecording(attempt, answer, head);
  if (recorder) relayBody(attempt, answer, recorder, head);
}

/** Kept back from the client (up to the bound): it is retried, or handed on whole once retrying is over. */
function keepBack(answer: IncomingMessage, status: number, limit: number, end: AttemptEnd): void {
  const chunks: Buffer[] = [];
  let kept = 0;
  const buffered = (): BufferedFailure => ({
    status,
    code: null,
    message: `upstream answered ${status}`,
    retryAfterMs: parseRetryAfter({ get: (name) => headerText(answer.headers[name]) }),
    headers: answer.headers,
    body: Buffer.concat(chunks),
  });
  answer.on('data', (chunk: Buffer) => {
    const room = limit - kept;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    chunks.push(part);
    kept += part.length;
  });
  answer.on('end', () => end.settle(buffered()));
  answer.on('aborted', () => end.settle(buffered()));
}

/**
 * The recorder of the answer: the cut stream itself when this attempt replays one (null, and the call cut off, when
 * the replay is not a stream of the same status), else a new one, with a stream's head relayed at once.
 */
function startRecording(
  { context, response, call, exchange, upstream, end, resume }: OpenAttempt,
  answer: IncomingMessage,
  { status, contentType, isSse }: AnswerHead,
): SseRecorder | BodyRecorder | null {
  if (resume) {
    if (status !== exchange.status || !isSse) {
      end.cutOff(
        `upstream dropped the connection mid-response; its replay answered ${status}${isSse ? '' : ` (${contentType || 'no content type'})`}`,
      );
      upstream.destroy();
      return null;
    }
    resume.replay();
    end.streaming = resume;
    return resume;
  }
  exchange.status = status;
  if (isSse) {
    // A stream is relayed as it comes; a plain body is relayed whole once it has come, with the key out.
    const headers = context.scrubber ? context.scrubber.headers(answer.headers) : answer.headers;
    response.writeHead(status, relayedHeaders(headers, true));
    response.flushHeaders();
  }
  const recorder = isSse ? new SseRecorder(call.usageInjected) : new BodyRecorder();
  // Only a successful stream can be replayed and joined: an error body is what the server meant.
  if (recorder instanceof SseRecorder && status < 300) end.streaming = recorder;
  return recorder;
}

/** The answer's body, through the recorder to the client, within the bound; its end relays a plain body whole. */
function relayBody(
  { context, response, exchange, upstream, end, sseScrubber }: OpenAttempt,
  answer: IncomingMessage,
  recorder: SseRecorder | BodyRecorder,
  { status, contentType, isSse }: AnswerHead,
): void {
  const limit = context.maxResponseBytes;
  answer.on(
    'data',
    end.guarded((chunk: Buffer) => {
      if (end.settled) return;
      exchange.responseBytes += chunk.length;
      if (exchange.responseBytes > limit) {
        upstream.destroy();
        if (!end.streaming) exchange.response = recorder.finish(contentType).response;
        end.cutOff(
          `upstream answer over the bound of ${limit} bytes: ${isSse ? 'relayed and recorded up to there, then cut' : 'not relayed'}`,
        );
        return;
      }
      const relayed = recorder.push(chunk);
      if (relayed.length > 0 && !response.destroyed) {
        response.write(sseScrubber ? sseScrubber.push(relayed) : relayed);
      }
      if (recorder instanceof SseRecorder && recorder.diverged !== null) {
        upstream.destroy();
        end.cutOff(
          `upstream dropped the connection mid-response; its replay differed from what was relayed at event ${recorder.diverged + 1}`,
        );
      }
    }),
  );
  answer.on(
    'end',
    end.guarded(() => {
      if (end.settled) return;
      const outcome = recorder.finish(contentType);
      exchange.response = outcome.response;
      exchange.error = outcome.error;
      if (recorder instanceof BodyRecorder) {
        sendBody(context, response, status, answer.headers, recorder.bytes, () => end.settle('relayed'));
        return;
      }
      const held = sseScrubber?.finish();
      if (held && held.length > 0 && !response.destroyed) response.write(held);
      response.end(() => end.settle('relayed'));
    }),
  );
  answer.on(
    'aborted',
    end.guarded(() => {
      if (end.settled) return;
      const message = `upstream dropped the connection mid-response after ${exchange.responseBytes} bytes`;
      if (end.streaming) end.cutMidStream(message);
      else {
        exchange.response = recorder.finish(contentType).response;
        end.cutOff(message);
      }
    }),
  );
}
