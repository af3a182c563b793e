import type { IncomingMessage, ServerResponse } from 'node:http';

import { timerDelay } from '../timer-duration.js';

import { BodyRecorder } from './body-recorder.js';
import { NO_EXCHANGE, type Exchange } from './exchange.js';
import type { UpstreamAttempt } from './log-row.js';
import { sendJson } from './own-answers.js';
import { roundMs } from './proxy-log-writer.js';
import {
  sendBody,
  type BufferedFailure,
  type ClientConnection,
  type RelayContext,
  type RelayedCall,
} from './relay-context.js';
import type { SseRecorder } from './sse-recorder.js';
import { SseSecretScrubber } from './sse-scrubber.js';
import { attemptUpstream } from './upstream-attempt.js';
import { upstreamRetryDelayMs } from './upstream-retry.js';

/**
 * Relays one call, retrying the upstream while nothing has reached the client yet (see `UpstreamRetryPolicy`).
 * Once the answer's head is relayed, the answer is streamed through as it arrives; a stream cut mid-way is
 * replayed within the same bounds and joined to what the client has, when the replay says the same (`SseRecorder`).
 */
export async function relayCall(
  context: RelayContext,
  request: IncomingMessage,
  response: ServerResponse,
  call: RelayedCall,
): Promise<Exchange> {
  const exchange: Exchange = { ...NO_EXCHANGE };
  const attempts: UpstreamAttempt[] = [];
  // One for the whole call: a stream resumed from a replay goes on with the text held back so far.
  const sseScrubber = context.scrubber ? new SseSecretScrubber(context.scrubber) : null;
  const connection: ClientConnection = { gone: false, onGone: null, upstream: null };
  response.on('close', () => {
    if (response.writableFinished) return;
    connection.gone = true;
    exchange.clientDisconnected = true;
    exchange.error ??= 'client disconnected before the response ended';
    connection.upstream?.destroy();
    connection.onGone?.();
  });
  const began = performance.now();
  let cutStream: SseRecorder | null = null;
  let attemptContext = context;
  for (let attempt = 1; ; attempt++) {
    const attemptStarted = performance.now();
    const lease = context.replicas?.pick() ?? null;
    if (lease) attemptContext = { ...context, upstreamUrl: new URL(lease.address) };
    const outcome = await attemptUpstream(attemptContext, request, response, call, exchange, connection, {
      resume: cutStream,
      sseScrubber,
    });
    lease?.done(outcome === 'relayed' ? 'ok' : 'failed');
    if (lease) exchange.replica = lease.address;
    const timing = {
      startedAfterMs: roundMs(attemptStarted - began),
      durationMs: roundMs(performance.now() - attemptStarted),
      ...(lease ? { replica: lease.address } : {}),
    };
    if (outcome === 'relayed') {
      attempts.push({ status: exchange.status, error: exchange.error, ...timing, delayMs: null });
      break;
    }
    cutStream = outcome.cut ?? cutStream;
    const delayMs = connection.gone
      ? null
      : upstreamRetryDelayMs(outcome, attempt, performance.now() - began, context.retry);
    const status = outcome.cut ? exchange.status : outcome.status;
    attempts.push({ status, error: outcome.message, ...timing, delayMs });
    if (delayMs === null) {
      if (connection.gone) break;
      const tries = givingUp(attempts.length, began);
      if (cutStream) {
        exchange.response = cutStream.finish().response;
        exchange.error = `${outcome.message}${tries}`;
        response.destroy();
      } else answerWithFailure(attemptContext, response, exchange, outcome, tries);
      break;
    }
    await waitUnlessGone(delayMs, connection);
    if (connection.gone) break;
  }
  return { ...exchange, attempts };
}

/** The last failure, as the upstream gave it (or a 502 when it gave nothing), once retrying is over. */
function answerWithFailure(
  context: RelayContext,
  response: ServerResponse,
  exchange: Exchange,
  failed: BufferedFailure,
  tries: string,
): void {
  if (failed.status === null) {
    const text = `mass proxy: upstream ${context.upstreamUrl.origin} unreachable or failed: ${failed.message}${tries}`;
    const message = context.scrubber ? context.scrubber.text(text) : text;
    const body = { error: { message, type: 'upstream_error' } };
    exchange.status = 502;
    exchange.error = message;
    exchange.response = { kind: 'json', body };
    sendJson(response, 502, body);
    return;
  }
  exchange.status = failed.status;
  exchange.responseBytes += failed.body.length;
  const recorder = new BodyRecorder();
  recorder.push(failed.body);
  exchange.response = recorder.finish(failed.headers['content-type'] ?? '').response;
  exchange.error = `${failed.message}${tries}`;
  sendBody(context, response, failed.status, failed.headers, failed.body);
}

function givingUp(attempts: number, began: number): string {
  if (attempts <= 1) return '';
  return ` (gave up after ${attempts} attempts over ${((performance.now() - began) / 1000).toFixed(1)} s)`;
}

function waitUnlessGone(ms: number, connection: ClientConnection): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, timerDelay(ms));
    connection.onGone = done;
    function done() {
      clearTimeout(timer);
      connection.onGone = null;
      resolve();
    }
  });
}
