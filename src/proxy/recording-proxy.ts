import {
  Agent as HttpAgent,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { UserError, errorMessage } from '../errors.js';
import { replicaSetOf, type ReplicaSet } from '../model/replicas.js';
import { isRecord } from '../model/stream-accumulator.js';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_RESPONSE_BYTES, readBoundedBody } from './bounded-body.js';
import { meterCall } from './call-metering.js';
import { chatRequestProblem, forwardedChatBody } from './chat-request.js';
import { NO_EXCHANGE, type Exchange } from './exchange.js';
import { listenOn, removeSocket, type ListenAddress } from './listen-address.js';
import { secretsOf } from './log-redaction.js';
import type { ProxyLogRow } from './log-row.js';
import { answerMalformed } from './malformed-request.js';
import { routeOf } from './model-routes.js';
import { refuse, sendJson } from './own-answers.js';
import type { ProxyLimits } from './proxy-limits.js';
import { ProxyLogWriter, type CallStart } from './proxy-log-writer.js';
import type { RelayContext } from './relay-context.js';
import { SecretScrubber } from './secret-scrubber.js';
import { parseJson } from './sse-recorder.js';
import { TokenMeter } from './token-meter.js';
import { relayCall } from './upstream-relay.js';
import { DEFAULT_UPSTREAM_RETRY } from './upstream-retry.js';
import { parseUpstream } from './upstream-target.js';

/** Where the proxy listens, relays and records; its limits (`outputBudget`, `retry`) are `ProxyLimits`. */
export interface RecordingProxyOptions extends ProxyLimits {
  /** The model server, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is fine). */
  upstream: string;
  listen: ListenAddress;
  /** The JSONL request log; appended to. */
  logFile: string;
  /**
   * Ask the upstream for stream usage (`stream_options.include_usage`) when a client did not, so that every
   * streamed call is metered; the extra usage chunk is kept from that client. Default true.
   */
  meterStreams?: boolean;
  /**
   * The key the proxy sends upstream (as `Authorization: Bearer`), in place of whatever the client sent: clients
   * such as a sandboxed harness then never hold the real key. Scrubbed from the log like any client key.
   */
  upstreamApiKey?: string;
  /** Called with each row once it is written, as requests end, without its request (`request: null`). */
  onRow?: (row: ProxyLogRow) => void;
  /**
   * The most request-body bytes read (default `DEFAULT_MAX_REQUEST_BYTES`): a larger request is answered 413 and
   * recorded without its body.
   */
  maxRequestBytes?: number;
  /**
   * The most bytes of one upstream answer relayed and recorded (default `DEFAULT_MAX_RESPONSE_BYTES`): past it the
   * answer is cut, and the row says so.
   */
  maxResponseBytes?: number;
  /**
   * Answer `GET /_mass/usage` (`USAGE_PATH`) with the running token totals. Off by default: `mass proxy` serves it to
   * its operator; an episode's proxy, whose clients are the agents, does not.
   */
  serveUsage?: boolean;
  /**
   * Replicas of the upstream: each call goes to the least loaded healthy one, and its row names it (`replica`).
   * Default: the replicas this process declared for `upstream` (`declareReplicas`); null: `upstream` alone.
   */
  replicas?: ReplicaSet | null;
}

/** A path the proxy answers itself when asked to (`serveUsage`): the running token totals. */
export const USAGE_PATH = '/_mass/usage';

/**
 * A reverse proxy between an agent harness and its model server that records every request: one JSONL row
 * per request, written when it ends. Streams are relayed as they arrive and reassembled for the log.
 *
 * Its clients are not trusted (a sandboxed harness, and the agents' code beside it): it forwards only the model API
 * (`MODEL_ROUTES`), meters every forwarded call, bounds what it reads and relays, keeps the key it holds out of
 * what it relays back, and records whatever it refuses. No request, however malformed, can crash it.
 */
export class RecordingProxy {
  readonly meter = new TokenMeter();
  private budgetSpent = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly relay: RelayContext;
  private readonly maxRequestBytes: number;
  /** The response in progress on each connection, so that a malformed request is never answered into it. */
  private readonly responses = new WeakMap<object, ServerResponse>();

  private constructor(
    private readonly server: Server,
    private readonly log: ProxyLogWriter,
    private readonly options: RecordingProxyOptions,
  ) {
    const upstreamUrl = parseUpstream(options.upstream);
    const agentOptions = { keepAlive: true, maxSockets: Infinity };
    this.relay = {
      upstreamUrl,
      replicas: options.replicas === undefined ? replicaSetOf(options.upstream) : options.replicas,
      agent: upstreamUrl.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions),
      retry: { ...DEFAULT_UPSTREAM_RETRY, ...options.retry },
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      upstreamApiKey: options.upstreamApiKey,
      scrubber: SecretScrubber.of(options.upstreamApiKey),
    };
    this.maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  }

  static async start(options: RecordingProxyOptions): Promise<RecordingProxy> {
    parseUpstream(options.upstream);
    for (const [name, value] of [
      ['maxRequestBytes', options.maxRequestBytes],
      ['maxResponseBytes', options.maxResponseBytes],
    ] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
        throw new UserError(`${name} must be a whole number of bytes above zero, not ${value}`);
      }
    }
    const server = createServer();
    const log = new ProxyLogWriter(options.logFile, {
      upstreamApiKey: options.upstreamApiKey,
      onRow: options.onRow,
    });
    const proxy = new RecordingProxy(server, log, options);
    server.on('request', (request, response) => {
      proxy.responses.set(request.socket, response);
      proxy.track(proxy.handle(request, response));
    });
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      proxy.track(proxy.refuseMalformed(error, socket));
    });
    server.keepAliveTimeout = 60_000;
    await listenOn(server, options.listen);
    return proxy;
  }

  /** The address clients use: `http://host:port`, or the Unix socket path. */
  get address(): ListenAddress {
    if ('socketPath' in this.options.listen) return this.options.listen;
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  /** `http://host:port` for TCP; for a Unix socket, the URL a client must pair with the socket path. */
  get url(): string {
    const address = this.address;
    return 'socketPath' in address ? 'http://localhost' : `http://${address.host}:${address.port}`;
  }

  get logFile(): string {
    return this.log.path;
  }

  /** True once a chat request was refused because the output budget was spent. */
  get outputBudgetSpent(): boolean {
    return this.budgetSpent;
  }

  /** Set when a row could not be written (a full disk, say): the log is then incomplete. */
  get logError(): Error | null {
    return this.log.error;
  }

  /** Stop accepting; let requests in flight finish and be recorded, cutting those still open after the grace period. */
  async close(graceMs = 5_000): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
    this.server.closeAllConnections();
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(timer);
    await closed;
    this.relay.agent.destroy();
    await this.log.close();
    removeSocket(this.options.listen);
  }

  /** Keeps a request's handling until it ends, for `close` to wait on. Handling never rejects. */
  private track(handled: Promise<void>): void {
    this.inFlight.add(handled);
    void handled.finally(() => this.inFlight.delete(handled));
  }

  /** Serves one request; whatever goes wrong on the way is answered 500 and recorded, never thrown. */
  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const call = this.log.begin(request.method ?? 'GET', request.url ?? '', secretsOf(request.headers));
    try {
      await this.serve(request, response, call);
    } catch (error) {
      const message = `mass proxy: internal error while serving ${call.method} ${JSON.stringify(call.path.slice(0, 200))}: ${errorMessage(error)}`;
      const answered = !response.headersSent && !response.destroyed;
      if (answered) sendJson(response, 500, { error: { message, type: 'mass_proxy_error' } });
      else response.destroy();
      try {
        await this.log.record(call, {
          exchange: { ...NO_EXCHANGE, status: answered ? 500 : null, error: message },
        });
      } catch {
        // The row cannot be written either: the log's own error (`logError`) says so.
      }
    }
  }

  private async serve(request: IncomingMessage, response: ServerResponse, call: CallStart): Promise<void> {
    const { method, path } = call;
    if (this.options.serveUsage && method === 'GET' && path === USAGE_PATH) {
      sendJson(response, 200, this.meter.snapshot());
      return; // Not a model call: not recorded.
    }
    const decision = routeOf(method, path);
    if (!decision.ok) {
      const exchange = refuse(response, decision.status, decision.message, {
        unreadBody: request,
        ...(decision.allow === undefined ? {} : { allow: decision.allow }),
      });
      await this.log.record(call, { exchange, refusal: 'not_forwarded' });
      return;
    }
    const route = decision.route;
    const read = await readBoundedBody(request, this.maxRequestBytes);
    if (read.kind === 'gone') return; // The client went away before sending its request: nothing to relay or record.
    if (read.kind === 'too-large') {
      const size =
        read.declared !== null
          ? `Content-Length ${read.declared}`
          : `over ${this.maxRequestBytes} bytes sent`;
      const message = `mass proxy: ${method} ${path} refused: the request body (${size}) is over the bound of ${this.maxRequestBytes} bytes; it was not read further (a real call that needs more: raise the bound, e.g. mass proxy --max-request-bytes)`;
      const exchange = refuse(response, 413, message, { unreadBody: request });
      await this.log.record(call, { exchange, refusal: 'too_large', requestByteCount: read.received });
      return;
    }

    const requestBytes = read.bytes;
    const parsed = parseJson(requestBytes);
    const body = parsed.ok ? parsed.value : null;
    const model = isRecord(body) && typeof body.model === 'string' ? body.model : null;
    const problem =
      route.kind === 'chat'
        ? chatRequestProblem(parsed)
        : requestBytes.length > 0
          ? 'it takes no body'
          : null;
    const facts = { requestBytes, parsed, model };
    if (problem !== null) {
      const exchange = refuse(response, 400, `mass proxy: ${method} ${path} refused: ${problem}`);
      meterCall(this.meter, model, exchange);
      await this.log.record(call, { ...facts, exchange, refusal: 'malformed' });
      return;
    }

    const { stream, upstreamBody, usageInjected } =
      route.kind === 'chat' && isRecord(body)
        ? forwardedChatBody(body, this.options.meterStreams ?? true)
        : { stream: false, upstreamBody: Buffer.alloc(0), usageInjected: false };

    const budget = this.options.outputBudget;
    const overBudget = route.kind === 'chat' && budget !== undefined && this.meter.completionTokens >= budget;
    if (overBudget) this.budgetSpent = true;
    const exchange: Exchange = overBudget
      ? refuse(response, 400, `mass proxy: the output budget of ${budget} completion tokens is spent`)
      : await relayCall(this.relay, request, response, { route, upstreamBody, stream, usageInjected });
    meterCall(this.meter, model, exchange);
    await this.log.record(call, {
      ...facts,
      exchange,
      stream,
      usageInjected,
      refusal: overBudget ? 'output_budget' : null,
    });
  }

  /** A request Node's HTTP parser could not read: answered (see `answerMalformed`) and recorded. */
  private async refuseMalformed(error: NodeJS.ErrnoException, socket: Duplex): Promise<void> {
    const exchange = answerMalformed(error, socket, this.responses.get(socket));
    if (exchange === null) return;
    try {
      await this.log.record(this.log.begin('', '', []), { exchange, refusal: 'malformed' });
    } catch {
      // The row cannot be written: the log's own error (`logError`) says so.
    }
  }
}

export function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  return RecordingProxy.start(options);
}
