import type { Agent as HttpAgent, ClientRequest, IncomingHttpHeaders, ServerResponse } from 'node:http';

import type { ReplicaSet } from '../model/replicas.js';
import type { ModelRoute } from './model-routes.js';
import { relayedHeaders } from './relayed-headers.js';
import type { SecretScrubber } from './secret-scrubber.js';
import type { SseRecorder } from './sse-recorder.js';
import type { FailedAttempt, UpstreamRetryPolicy } from './upstream-retry.js';

/** What relaying a call to the model server needs, the same for every call of one proxy. */
export interface RelayContext {
  upstreamUrl: URL;
  /**
   * Replicas of the upstream (`src/model/replicas.ts`): each attempt goes to the least loaded healthy one, and the
   * row names the replica that answered; null: every attempt goes to `upstreamUrl`.
   */
  replicas?: ReplicaSet | null;
  /** Keeps connections to the upstream open between calls. */
  agent: HttpAgent;
  retry: UpstreamRetryPolicy;
  /** The most bytes of one upstream answer relayed and recorded. */
  maxResponseBytes: number;
  /** The key sent upstream in place of the client's. */
  upstreamApiKey?: string;
  /** Takes the key the proxy holds out of what it relays back; null when it holds none worth scrubbing. */
  scrubber: SecretScrubber | null;
}

/** One call to forward, as checked: the route, the body as it goes upstream, and whether it streams. */
export interface RelayedCall {
  route: ModelRoute;
  upstreamBody: Buffer;
  stream: boolean;
  usageInjected: boolean;
}

/** The client's side of a call while it is retried: whether it went away, and the upstream request now open. */
export interface ClientConnection {
  gone: boolean;
  onGone: (() => void) | null;
  upstream: ClientRequest | null;
}

/** A transient failure before any byte reached the client, with what the upstream sent (to hand on if it lasts). */
export interface BufferedFailure extends FailedAttempt {
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Set for a stream cut after some of it was relayed: what the client has, to resume from. */
  cut?: SseRecorder;
}

/** A whole answer to the client: the key taken out of its headers and body, its length as sent. */
export function sendBody(
  context: RelayContext,
  response: ServerResponse,
  status: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  onSent?: () => void,
): void {
  if (response.destroyed) {
    onSent?.();
    return;
  }
  const { scrubber } = context;
  const relayed = scrubber ? scrubber.body(body) : body;
  const relayedHead = relayedHeaders(scrubber ? scrubber.headers(headers) : headers, true);
  relayedHead['content-length'] = relayed.length;
  response.writeHead(status, relayedHead);
  response.end(relayed, onSent);
}

export function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}
