import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { timerDelay } from '../timer-duration.js';
import { AttemptEnd, type AttemptOutcome } from './attempt-end.js';
import type { Exchange } from './exchange.js';
import type { ClientConnection, RelayContext, RelayedCall } from './relay-context.js';
import { forwardedHeaders } from './relayed-headers.js';
import type { SseRecorder } from './sse-recorder.js';
import type { SseSecretScrubber } from './sse-scrubber.js';
import { relayAnswer } from './upstream-answer.js';
import { upstreamTarget } from './upstream-target.js';

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
): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const target = upstreamTarget(context.upstreamUrl, call.route.path);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(target, {
      method: call.route.method,
      headers: forwardedHeaders(request.headers, target, call.upstreamBody.length, context.upstreamApiKey),
      agent: context.agent,
    });
    const end = new AttemptEnd(exchange, response, connection, upstream, resolve);
    connection.upstream = upstream;
    connection.onGone = () => end.settle('relayed');
    const headTimeoutMs = context.retry.responseHeadTimeoutMs;
    if (call.stream && headTimeoutMs !== null) {
      end.headTimer = setTimeout(() => {
        const error = Object.assign(new Error(`no response head within ${headTimeoutMs / 1000} s`), {
          code: 'ETIMEDOUT',
        });
        upstream.destroy(error);
      }, timerDelay(headTimeoutMs));
    }
    upstream.on('error', (error) => end.failed(error));
    const attempt = { context, response, call, exchange, upstream, end, resume, sseScrubber };
    upstream.on(
      'response',
      end.guarded((answer: IncomingMessage) => relayAnswer(attempt, answer)),
    );
    upstream.end(call.upstreamBody);
  });
}
