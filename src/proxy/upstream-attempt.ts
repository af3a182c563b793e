import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { errorMessage } from '../errors.js';
import { errorCode, parseRetryAfter } from '../model/retry.js';
import { timerDelay } from '../timer-duration.js';
import { BodyRecorder } from './body-recorder.js';
import type { Exchange } from './exchange.js';
import { sendJson } from './own-answers.js';
import {
  headerText,
  sendBody,
  type BufferedFailure,
  type ClientConnection,
  type RelayContext,
  type RelayedCall,
} from './relay-context.js';
import { forwardedHeaders, relayedHeaders } from './relayed-headers.js';
import { SseRecorder } from './sse-recorder.js';
import type { SseSecretScrubber } from './sse-scrubber.js';
import { upstreamTarget } from './upstream-target.js';
import { RETRYABLE_UPSTREAM_STATUSES } from './upstream-retry.js';

/**
 * One attempt at the upstream. A transient failure while nothing of this attempt reached the client comes back
 * buffered, for the caller to retry or hand on, as does a stream cut mid-way (with its recorder, to resume from);
 * anything else is relayed to the client here ('relayed'). `resume` is the stream this attempt replays.
 */
export function attemptUpstream(
  context: RelayContext,
  request: IncomingMessage,
  response: ServerResponse,
  call: RelayedCall,
  exchange: Exchange,
  connection: ClientConnection,
  { resume, sseScrubber }: { resume: SseRecorder | null; sseScrubber: SseSecretScrubber | null },
): Promise<'relayed' | BufferedFailure> {
  return new Promise((resolve) => {
    let settled = false;
    let headTimer: NodeJS.Timeout | undefined;
    /** The stream this attempt is relaying, once its head is accepted: a cut can be resumed from it. */
    let streaming: SseRecorder | null = null;
    let bodyStarted = false;
    const settle = (outcome: 'relayed' | BufferedFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(headTimer);
      connection.onGone = null;
      resolve(outcome);
    };
    const cutOff = (message: string) => {
      exchange.error = message;
      if (streaming) exchange.response = streaming.finish().response;
      if (response.headersSent) response.destroy();
      else {
        // Nothing of the answer reached the client yet (a plain body is relayed whole): it is told why.
        exchange.status = 502;
        sendJson(response, 502, { error: { message: `mass proxy: ${message}`, type: 'upstream_error' } });
      }
      settle('relayed');
    };
    const cutMidStream = (message: string) =>
      settle({
        status: null,
        code: 'ECONNRESET',
        message,
        retryAfterMs: null,
        headers: {},
        body: Buffer.alloc(0),
        cut: streaming!,
      });
    const target = upstreamTarget(context.upstreamUrl, call.route.path);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(target, {
      method: call.route.method,
      headers: forwardedHeaders(request.headers, target, call.upstreamBody.length, context.upstreamApiKey),
      agent: context.agent,
    });
    connection.upstream = upstream;
    connection.onGone = () => settle('relayed');
    const headTimeoutMs = context.retry.responseHeadTimeoutMs;
    if (call.stream && headTimeoutMs !== null) {
      headTimer = setTimeout(() => {
        const error = Object.assign(new Error(`no response head within ${headTimeoutMs / 1000} s`), {
          code: 'ETIMEDOUT',
        });
        upstream.destroy(error);
      }, timerDelay(headTimeoutMs));
    }

    upstream.on('error', (error) => {
      if (settled) return;
      if (!bodyStarted) {
        settle({
          status: null,
          code: errorCode(error),
          message: errorMessage(error),
          retryAfterMs: null,
          headers: {},
          body: Buffer.alloc(0),
        });
      } else if (streaming) {
        cutMidStream(`upstream connection failed mid-response: ${errorMessage(error)}`);
      } else {
        cutOff(`upstream connection failed mid-response: ${errorMessage(error)}`);
      }
    });

    /** A handler that cannot throw out of the event loop: a failure of the proxy's own cuts the call off. */
    const guarded =
      <A extends unknown[]>(handler: (...args: A) => void) =>
      (...args: A): void => {
        try {
          handler(...args);
        } catch (error) {
          upstream.destroy();
          cutOff(`internal error of the proxy while relaying the answer: ${errorMessage(error)}`);
        }
      };

    upstream.on(
      'response',
      guarded((upstreamResponse: IncomingMessage) => {
        clearTimeout(headTimer);
        const status = upstreamResponse.statusCode ?? 502;
        const contentType = upstreamResponse.headers['content-type'] ?? '';
        const limit = context.maxResponseBytes;
        // Asked for `identity`: a compressed answer could carry the key past the scrubber, which reads plain bytes.
        const encoding = headerText(upstreamResponse.headers['content-encoding'])?.trim().toLowerCase();
        if (encoding && encoding !== 'identity') {
          upstreamResponse.resume();
          upstream.destroy();
          cutOff(
            `the model server answered in content-encoding ${encoding}, not identity as asked: not relayed`,
          );
          return;
        }
        if (RETRYABLE_UPSTREAM_STATUSES.has(status)) {
          // Kept back from the client (up to the bound): it is retried, or handed on whole once retrying is over.
          const chunks: Buffer[] = [];
          let kept = 0;
          const buffered = (): BufferedFailure => ({
            status,
            code: null,
            message: `upstream answered ${status}`,
            retryAfterMs: parseRetryAfter({
              get: (name) => headerText(upstreamResponse.headers[name]),
            }),
            headers: upstreamResponse.headers,
            body: Buffer.concat(chunks),
          });
          upstreamResponse.on('data', (chunk: Buffer) => {
            const room = limit - kept;
            if (room <= 0) return;
            const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
            chunks.push(part);
            kept += part.length;
          });
          upstreamResponse.on('end', () => settle(buffered()));
          upstreamResponse.on('aborted', () => settle(buffered()));
          return;
        }
        const isSse = contentType.includes('text/event-stream');
        bodyStarted = true;
        let recorder: SseRecorder | BodyRecorder;
        if (resume) {
          if (status !== exchange.status || !isSse) {
            cutOff(
              `upstream dropped the connection mid-response; its replay answered ${status}${isSse ? '' : ` (${contentType || 'no content type'})`}`,
            );
            upstream.destroy();
            return;
          }
          resume.replay();
          recorder = streaming = resume;
        } else {
          exchange.status = status;
          if (isSse) {
            // A stream is relayed as it comes; a plain body is relayed whole once it has come, with the key out.
            const headers = context.scrubber
              ? context.scrubber.headers(upstreamResponse.headers)
              : upstreamResponse.headers;
            response.writeHead(status, relayedHeaders(headers, true));
            response.flushHeaders();
          }
          recorder = isSse ? new SseRecorder(call.usageInjected) : new BodyRecorder();
          // Only a successful stream can be replayed and joined: an error body is what the server meant.
          if (recorder instanceof SseRecorder && status < 300) streaming = recorder;
        }
        upstreamResponse.on(
          'data',
          guarded((chunk: Buffer) => {
            if (settled) return;
            exchange.responseBytes += chunk.length;
            if (exchange.responseBytes > limit) {
              upstream.destroy();
              if (!streaming) exchange.response = recorder.finish(contentType).response;
              cutOff(
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
              cutOff(
                `upstream dropped the connection mid-response; its replay differed from what was relayed at event ${recorder.diverged + 1}`,
              );
            }
          }),
        );
        upstreamResponse.on(
          'end',
          guarded(() => {
            if (settled) return;
            const outcome = recorder.finish(contentType);
            exchange.response = outcome.response;
            exchange.error = outcome.error;
            if (recorder instanceof BodyRecorder) {
              sendBody(context, response, status, upstreamResponse.headers, recorder.bytes, () =>
                settle('relayed'),
              );
              return;
            }
            const held = sseScrubber?.finish();
            if (held && held.length > 0 && !response.destroyed) response.write(held);
            response.end(() => settle('relayed'));
          }),
        );
        upstreamResponse.on(
          'aborted',
          guarded(() => {
            if (settled) return;
            const message = `upstream dropped the connection mid-response after ${exchange.responseBytes} bytes`;
            if (streaming) cutMidStream(message);
            else {
              exchange.response = recorder.finish(contentType).response;
              cutOff(message);
            }
          }),
        );
      }),
    );

    upstream.end(call.upstreamBody);
  });
}
