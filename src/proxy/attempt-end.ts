import type { ClientRequest, ServerResponse } from 'node:http';

import { errorMessage } from '../errors.js';
import { errorCode } from '../model/retry.js';
import type { Exchange } from './exchange.js';
import { sendJson } from './own-answers.js';
import type { BufferedFailure, ClientConnection } from './relay-context.js';
import type { SseRecorder } from './sse-recorder.js';

/** `relayed`: the client has its answer (or went away); else a failure buffered for the caller to retry or hand on. */
export type AttemptOutcome = 'relayed' | BufferedFailure;

/**
 * How one attempt at the upstream ends, once: relayed, buffered for a retry, cut off with the reason told to the
 * client, or cut mid-stream with the stream to resume from. Whatever comes after the first end is ignored.
 */
export class AttemptEnd {
  private ended = false;
  /** The stream this attempt is relaying, once its head is accepted: a cut can be resumed from it. */
  streaming: SseRecorder | null = null;
  /** Set once the answer's body is being relayed: a failure before it is retried from scratch. */
  bodyStarted = false;
  /** The bound on the wait for the answer's head, cleared when the head (or the end) comes. */
  headTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly exchange: Exchange,
    private readonly response: ServerResponse,
    private readonly connection: ClientConnection,
    private readonly upstream: ClientRequest,
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {}

  get settled(): boolean {
    return this.ended;
  }

  settle(outcome: AttemptOutcome): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.headTimer);
    this.connection.onGone = null;
    this.resolve(outcome);
  }

  /** Ends the call here: the client is told why, or (once its head is sent) its connection is cut. */
  cutOff(message: string): void {
    this.exchange.error = message;
    if (this.streaming) this.exchange.response = this.streaming.finish().response;
    if (this.response.headersSent) this.response.destroy();
    else {
      // Nothing of the answer reached the client yet (a plain body is relayed whole): it is told why.
      this.exchange.status = 502;
      sendJson(this.response, 502, { error: { message: `mass proxy: ${message}`, type: 'upstream_error' } });
    }
    this.settle('relayed');
  }

  /** A stream cut after some of it was relayed: handed back with what the client has, to resume from a replay. */
  cutMidStream(message: string): void {
    this.settle({
      status: null,
      code: 'ECONNRESET',
      message,
      retryAfterMs: null,
      headers: {},
      body: Buffer.alloc(0),
      cut: this.streaming!,
    });
  }

  /** The upstream connection failed: retried when no body was relayed yet, else resumed or cut off. */
  failed(error: unknown): void {
    if (this.ended) return;
    if (!this.bodyStarted) {
      this.settle({
        status: null,
        code: errorCode(error),
        message: errorMessage(error),
        retryAfterMs: null,
        headers: {},
        body: Buffer.alloc(0),
      });
    } else if (this.streaming) {
      this.cutMidStream(`upstream connection failed mid-response: ${errorMessage(error)}`);
    } else {
      this.cutOff(`upstream connection failed mid-response: ${errorMessage(error)}`);
    }
  }

  /** A handler that cannot throw out of the event loop: a failure of the proxy's own cuts the call off. */
  guarded<A extends unknown[]>(handler: (...args: A) => void): (...args: A) => void {
    return (...args: A): void => {
      try {
        handler(...args);
      } catch (error) {
        this.upstream.destroy();
        this.cutOff(`internal error of the proxy while relaying the answer: ${errorMessage(error)}`);
      }
    };
  }
}
