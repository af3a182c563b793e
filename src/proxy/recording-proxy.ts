import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import {
  Agent as HttpAgent,
  STATUS_CODES,
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { UserError, errorMessage } from '../errors.js';
import { errorCode, parseRetryAfter } from '../model/retry.js';
import { isRecord, type ReassembledCompletion } from '../model/stream-accumulator.js';
import { AssistantMessage, tokenUsageFromWire, WireUsage } from '../model/types.js';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_RESPONSE_BYTES, readBoundedBody } from './bounded-body.js';
import { chatRequestProblem } from './chat-request.js';
import { JsonlAppender } from './jsonl-appender.js';
import type { ProxyLogRow, ProxyRefusal, RecordedResponse, UpstreamAttempt } from './log-row.js';
import { NO_EXCHANGE, type Exchange } from './exchange.js';
import { redact, secretsOf } from './log-redaction.js';
import { routeOf, type ModelRoute } from './model-routes.js';
import { refuse, sendJson } from './own-answers.js';
import { forwardedHeaders, relayedHeaders } from './relayed-headers.js';
import { SecretScrubber } from './secret-scrubber.js';
import { parseJson, SseRecorder, type ParsedJson } from './sse-recorder.js';
import { SseSecretScrubber } from './sse-scrubber.js';
import { TokenMeter } from './token-meter.js';
import {
  DEFAULT_UPSTREAM_RETRY,
  RETRYABLE_UPSTREAM_STATUSES,
  upstreamRetryDelayMs,
  type FailedAttempt,
  type UpstreamRetryPolicy,
} from './upstream-retry.js';

export type ListenAddress = { host: string; port: number } | { socketPath: string };

export interface RecordingProxyOptions {
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
   * The most completion tokens (all models together) this proxy lets through. Once spent, chat requests get a 400
   * that says so, and `outputBudgetSpent` turns true. Calls in flight when it runs out finish normally.
   */
  outputBudget?: number;
  /**
   * The key the proxy sends upstream (as `Authorization: Bearer`), in place of whatever the client sent: clients
   * such as a sandboxed harness then never hold the real key. Scrubbed from the log like any client key.
   */
  upstreamApiKey?: string;
  /**
   * Retrying an upstream that fails before the client got a byte (default `DEFAULT_UPSTREAM_RETRY`; fields left out
   * keep their defaults; `maxAttempts: 1` turns it off).
   */
  retry?: Partial<UpstreamRetryPolicy>;
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
}

/** Text bodies (error pages and the like) are kept up to this many characters. */
const MAX_TEXT_CHARACTERS = 64 * 1024;
/** Parser errors that mean the client closed its connection, not that it sent something malformed. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'HPE_INVALID_EOF_STATE']);
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
  private sequence = 0;
  private budgetSpent = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly upstreamUrl: URL;
  private readonly agent: HttpAgent;
  private readonly retry: UpstreamRetryPolicy;
  private readonly maxRequestBytes: number;
  private readonly maxResponseBytes: number;
  /** Takes the key the proxy holds out of what it relays back; null when it holds none worth scrubbing. */
  private readonly scrubber: SecretScrubber | null;
  /** The response in progress on each connection, so that a malformed request is never answered into it. */
  private readonly responses = new WeakMap<object, ServerResponse>();

  private constructor(
    private readonly server: Server,
    private readonly log: JsonlAppender,
    private readonly options: RecordingProxyOptions,
  ) {
    this.upstreamUrl = parseUpstream(options.upstream);
    this.retry = { ...DEFAULT_UPSTREAM_RETRY, ...options.retry };
    this.maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.scrubber = SecretScrubber.of(options.upstreamApiKey);
    const agentOptions = { keepAlive: true, maxSockets: Infinity };
    this.agent =
      this.upstreamUrl.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
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
    const proxy = new RecordingProxy(server, new JsonlAppender(options.logFile), options);
    server.on('request', (request, response) => {
      proxy.responses.set(request.socket, response);
      proxy.track(proxy.handle(request, response));
    });
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      proxy.track(proxy.refuseMalformed(error, socket));
    });
    server.keepAliveTimeout = 60_000;
    await listen(server, options.listen);
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
    this.agent.destroy();
    await this.log.close();
    if ('socketPath' in this.options.listen && existsSync(this.options.listen.socketPath)) {
      unlinkSync(this.options.listen.socketPath);
    }
  }

  /** Keeps a request's handling until it ends, for `close` to wait on. Handling never rejects. */
  private track(handled: Promise<void>): void {
    this.inFlight.add(handled);
    void handled.finally(() => this.inFlight.delete(handled));
  }

  private begin(method: string, path: string, secrets: string[]): CallStart {
    if (this.options.upstreamApiKey) secrets.push(this.options.upstreamApiKey);
    return {
      seq: this.sequence++,
      startedAt: Date.now(),
      started: performance.now(),
      method,
      path,
      secrets,
      recorded: false,
    };
  }

  /** Serves one request; whatever goes wrong on the way is answered 500 and recorded, never thrown. */
  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const call = this.begin(request.method ?? 'GET', request.url ?? '', secretsOf(request.headers));
    try {
      await this.serve(request, response, call);
    } catch (error) {
      const message = `mass proxy: internal error while serving ${call.method} ${JSON.stringify(call.path.slice(0, 200))}: ${errorMessage(error)}`;
      const answered = !response.headersSent && !response.destroyed;
      if (answered) sendJson(response, 500, { error: { message, type: 'mass_proxy_error' } });
      else response.destroy();
      try {
        await this.record(call, {
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
      await this.record(call, { exchange, refusal: 'not_forwarded' });
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
      await this.record(call, { exchange, refusal: 'too_large', requestByteCount: read.received });
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
      this.meterCall(model, exchange);
      await this.record(call, { ...facts, exchange, refusal: 'malformed' });
      return;
    }

    const stream = route.kind === 'chat' && isRecord(body) && body.stream === true;
    let upstreamBody = Buffer.alloc(0);
    let usageInjected = false;
    if (route.kind === 'chat' && isRecord(body)) {
      // What is forwarded is what was checked and is recorded: the body as parsed, written again.
      let forwarded = body;
      const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
      if (stream && (this.options.meterStreams ?? true) && streamOptions.include_usage !== true) {
        forwarded = { ...body, stream_options: { ...streamOptions, include_usage: true } };
        usageInjected = true;
      }
      upstreamBody = Buffer.from(JSON.stringify(forwarded));
    }

    const budget = this.options.outputBudget;
    const overBudget = route.kind === 'chat' && budget !== undefined && this.meter.completionTokens >= budget;
    if (overBudget) this.budgetSpent = true;
    const exchange: Exchange = overBudget
      ? refuse(response, 400, `mass proxy: the output budget of ${budget} completion tokens is spent`)
      : await this.relay(request, response, { route, upstreamBody, stream, usageInjected });
    this.meterCall(model, exchange);
    await this.record(call, {
      ...facts,
      exchange,
      stream,
      usageInjected,
      refusal: overBudget ? 'output_budget' : null,
    });
  }

  /** Counts a call against the meter (and so the budget) by the usage its answer reports, whatever its shape. */
  private meterCall(model: string | null, exchange: Exchange): void {
    const completion = exchange.response?.kind === 'completion' ? exchange.response.completion : null;
    const failed = exchange.error !== null || exchange.status === null || exchange.status >= 400;
    this.meter.record(
      model ?? completion?.model ?? 'unknown',
      tokenUsageFromWire(reportedUsage(exchange.response)),
      failed,
    );
  }

  /** Writes the call's row (once), with every secret the call carried scrubbed, and hands it to `onRow`. */
  private async record(call: CallStart, facts: RowFacts): Promise<void> {
    if (call.recorded) return;
    const { exchange } = facts;
    const requestBytes = facts.requestBytes ?? Buffer.alloc(0);
    const parsed: ParsedJson = facts.parsed ?? { ok: false };
    const row: Omit<ProxyLogRow, 'request'> = {
      schemaVersion: 1,
      seq: call.seq,
      startedAt: new Date(call.startedAt).toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: roundMs(performance.now() - call.started),
      method: call.method,
      path: call.path,
      status: exchange.status,
      model: facts.model ?? null,
      stream: facts.stream ?? false,
      requestIsJson: parsed.ok,
      response: exchange.response,
      bytes: { request: facts.requestByteCount ?? requestBytes.length, response: exchange.responseBytes },
      clientDisconnected: exchange.clientDisconnected,
      usageInjected: facts.usageInjected ?? false,
      error: exchange.error,
      attempts: exchange.attempts ?? [],
      refusal: facts.refusal ?? null,
    };
    const line = redact(serializeRow(row, requestBytes, parsed), call.secrets);
    call.recorded = true;
    await this.log.append(line);
    if (this.options.onRow) {
      // The row's figures as the log has them, its request left out (it can be megabytes: the log holds it).
      this.options.onRow({ ...row, request: null, error: row.error && redact(row.error, call.secrets) });
    }
  }

  /**
   * A request Node's HTTP parser could not read (a broken request line, oversized headers, a bad chunk): answered
   * 400 (431, 408) as Node would, unless a response is already under way on that connection, and recorded.
   */
  private async refuseMalformed(error: NodeJS.ErrnoException, socket: Duplex): Promise<void> {
    if (CLIENT_GONE.has(error.code ?? '') || !socket.writable) {
      socket.destroy();
      return; // The client went away mid-request: nothing to answer or record.
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = `mass proxy: a malformed HTTP request was refused (${error.code ?? 'parse error'}: ${errorMessage(error)})`;
    const inProgress = this.responses.get(socket);
    const answering = inProgress !== undefined && inProgress.headersSent && !inProgress.writableFinished;
    const body = JSON.stringify({ error: { message, type: 'mass_proxy_refusal' } });
    if (!answering) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy();
    const exchange: Exchange = {
      ...NO_EXCHANGE,
      status: answering ? null : status,
      response: { kind: 'json', body: JSON.parse(body) as unknown },
      error: message,
    };
    try {
      await this.record(this.begin('', '', []), { exchange, refusal: 'malformed' });
    } catch {
      // The row cannot be written: the log's own error (`logError`) says so.
    }
  }

  /**
   * Relays one call, retrying the upstream while nothing has reached the client yet (see `UpstreamRetryPolicy`).
   * Once the answer's head is relayed, the answer is streamed through as it arrives; a stream cut mid-way is
   * replayed within the same bounds and joined to what the client has, when the replay says the same (`SseRecorder`).
   */
  private async relay(
    request: IncomingMessage,
    response: ServerResponse,
    call: RelayedCall,
  ): Promise<Exchange> {
    const exchange: Exchange = { ...NO_EXCHANGE };
    const attempts: UpstreamAttempt[] = [];
    // One for the whole call: a stream resumed from a replay goes on with the text held back so far.
    const sseScrubber = this.scrubber ? new SseSecretScrubber(this.scrubber) : null;
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
    for (let attempt = 1; ; attempt++) {
      const attemptStarted = performance.now();
      const outcome = await this.attempt(request, response, call, exchange, connection, {
        resume: cutStream,
        sseScrubber,
      });
      const timing = {
        startedAfterMs: roundMs(attemptStarted - began),
        durationMs: roundMs(performance.now() - attemptStarted),
      };
      if (outcome === 'relayed') {
        attempts.push({ status: exchange.status, error: exchange.error, ...timing, delayMs: null });
        break;
      }
      cutStream = outcome.cut ?? cutStream;
      const delayMs = connection.gone
        ? null
        : upstreamRetryDelayMs(outcome, attempt, performance.now() - began, this.retry);
      const status = outcome.cut ? exchange.status : outcome.status;
      attempts.push({ status, error: outcome.message, ...timing, delayMs });
      if (delayMs === null) {
        if (connection.gone) break;
        const tries = givingUp(attempts.length, began);
        if (cutStream) {
          exchange.response = cutStream.finish().response;
          exchange.error = `${outcome.message}${tries}`;
          response.destroy();
        } else this.answerWithFailure(response, exchange, outcome, tries);
        break;
      }
      await waitUnlessGone(delayMs, connection);
      if (connection.gone) break;
    }
    return { ...exchange, attempts };
  }

  /** The last failure, as the upstream gave it (or a 502 when it gave nothing), once retrying is over. */
  private answerWithFailure(
    response: ServerResponse,
    exchange: Exchange,
    failed: BufferedFailure,
    tries: string,
  ): void {
    if (failed.status === null) {
      const message = this.scrubbed(
        `mass proxy: upstream ${this.upstreamUrl.origin} unreachable or failed: ${failed.message}${tries}`,
      );
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
    this.sendBody(response, failed.status, failed.headers, failed.body);
  }

  /** A whole answer to the client: the key taken out of its headers and body, its length as sent. */
  private sendBody(
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
    const relayed = this.scrubber ? this.scrubber.body(body) : body;
    const relayedHead = relayedHeaders(this.scrubber ? this.scrubber.headers(headers) : headers, true);
    relayedHead['content-length'] = relayed.length;
    response.writeHead(status, relayedHead);
    response.end(relayed, onSent);
  }

  private scrubbed(text: string): string {
    return this.scrubber ? this.scrubber.text(text) : text;
  }

  /**
   * One attempt at the upstream. A transient failure while nothing of this attempt reached the client comes back
   * buffered, for the caller to retry or hand on, as does a stream cut mid-way (with its recorder, to resume from);
   * anything else is relayed to the client here ('relayed'). `resume` is the stream this attempt replays.
   */
  private attempt(
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
      const target = upstreamTarget(this.upstreamUrl, call.route.path);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const upstream = send(target, {
        method: call.route.method,
        headers: forwardedHeaders(
          request.headers,
          target,
          call.upstreamBody.length,
          this.options.upstreamApiKey,
        ),
        agent: this.agent,
      });
      connection.upstream = upstream;
      connection.onGone = () => settle('relayed');
      const headTimeoutMs = this.retry.responseHeadTimeoutMs;
      if (call.stream && headTimeoutMs !== null) {
        headTimer = setTimeout(() => {
          const error = Object.assign(new Error(`no response head within ${headTimeoutMs / 1000} s`), {
            code: 'ETIMEDOUT',
          });
          upstream.destroy(error);
        }, headTimeoutMs);
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
          const limit = this.maxResponseBytes;
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
              const headers = this.scrubber
                ? this.scrubber.headers(upstreamResponse.headers)
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
                this.sendBody(response, status, upstreamResponse.headers, recorder.bytes, () =>
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
}

interface RelayedCall {
  route: ModelRoute;
  upstreamBody: Buffer;
  stream: boolean;
  usageInjected: boolean;
}

/** A request as it began, until its row is written. */
interface CallStart {
  seq: number;
  startedAt: number;
  started: number;
  method: string;
  path: string;
  /** Every credential the call carried (and the proxy's own key), scrubbed from its row. */
  secrets: string[];
  recorded: boolean;
}

/** What a row says beyond the request line; what is left out was not known (refused before the body was read). */
interface RowFacts {
  exchange: Exchange;
  requestBytes?: Buffer;
  parsed?: ParsedJson;
  /** Bytes received, when the body was not kept (over the bound). */
  requestByteCount?: number;
  model?: string | null;
  stream?: boolean;
  usageInjected?: boolean;
  refusal?: ProxyRefusal | null;
}

/** The client's side of a call while it is retried: whether it went away, and the upstream request now open. */
interface ClientConnection {
  gone: boolean;
  onGone: (() => void) | null;
  upstream: ClientRequest | null;
}

/** A transient failure before any byte reached the client, with what the upstream sent (to hand on if it lasts). */
interface BufferedFailure extends FailedAttempt {
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Set for a stream cut after some of it was relayed: what the client has, to resume from. */
  cut?: SseRecorder;
}

function givingUp(attempts: number, began: number): string {
  if (attempts <= 1) return '';
  return ` (gave up after ${attempts} attempts over ${((performance.now() - began) / 1000).toFixed(1)} s)`;
}

function waitUnlessGone(ms: number, connection: ClientConnection): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    connection.onGone = done;
    function done() {
      clearTimeout(timer);
      connection.onGone = null;
      resolve();
    }
  });
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The usage an answer reports: a completion's, or the `usage` of any other JSON answer, when it is well formed. */
function reportedUsage(response: RecordedResponse | null): WireUsage | null {
  const usage =
    response?.kind === 'completion'
      ? response.completion.usage
      : response?.kind === 'json' && isRecord(response.body)
        ? response.body.usage
        : null;
  if (usage === null || usage === undefined) return null;
  const parsed = WireUsage.safeParse(usage);
  return parsed.success ? parsed.data : null;
}

interface Recorder {
  /** Takes upstream bytes; returns the bytes to relay to the client now. */
  push(chunk: Buffer): Buffer;
  finish(contentType: string): { response: RecordedResponse | null; error: string | null };
}

/** Keeps a plain body as it arrives, to relay whole (with the key taken out) and to record. */
class BodyRecorder implements Recorder {
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

/**
 * The row as one JSON line. A JSON request body is spliced in as the client sent it when that keeps the line one
 * line: request bodies are the bulk of a log (whole conversations), and serialising them again would double the cost.
 */
function serializeRow(row: Omit<ProxyLogRow, 'request'>, requestBytes: Buffer, parsed: ParsedJson): string {
  if (!parsed.ok) {
    return JSON.stringify({
      ...row,
      request: requestBytes.length === 0 ? null : requestBytes.toString('utf8'),
    });
  }
  const text = requestBytes.toString('utf8');
  const requestJson = /[\r\n]/.test(text) ? JSON.stringify(parsed.value) : text;
  return `${JSON.stringify(row).slice(0, -1)},"request":${requestJson}}`;
}

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

function parseUpstream(upstream: string): URL {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw new UserError(
      `--upstream "${upstream}" is not a URL: give the model server's address, e.g. http://127.0.0.1:8000`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`--upstream "${upstream}" must start with http:// or https://`);
  }
  if (url.search !== '' || url.hash !== '' || upstream.includes('?') || upstream.includes('#')) {
    throw new UserError(
      `--upstream "${upstream}" has a query or fragment: give the model server's bare address, e.g. http://127.0.0.1:8000`,
    );
  }
  return url;
}

/**
 * The upstream URL for a forwarded path (one of `MODEL_ROUTES`, never a raw request target); `/v1` is not doubled
 * when the upstream already ends in it.
 */
export function upstreamTarget(upstream: URL, incomingPath: string): URL {
  let prefix = upstream.pathname.replace(/\/+$/, '');
  if (
    prefix.endsWith('/v1') &&
    (incomingPath === '/v1' || incomingPath.startsWith('/v1/') || incomingPath.startsWith('/v1?'))
  ) {
    prefix = prefix.slice(0, -3);
  }
  const target = new URL(upstream.href);
  target.pathname = `${prefix}${incomingPath}`;
  target.search = '';
  target.hash = '';
  // Credentials in the upstream's address are not sent: the key goes in the Authorization header.
  target.username = '';
  target.password = '';
  return target;
}

async function listen(server: Server, address: ListenAddress): Promise<void> {
  if ('socketPath' in address && existsSync(address.socketPath)) {
    if (!lstatSync(address.socketPath).isSocket()) {
      throw new UserError(`--listen ${address.socketPath} exists and is not a socket: choose another path`);
    }
    unlinkSync(address.socketPath);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = 'socketPath' in address ? address.socketPath : `${address.host}:${address.port}`;
      reject(
        error.code === 'EADDRINUSE'
          ? new UserError(`cannot listen on ${where}: the address is in use; choose another --listen`)
          : error,
      );
    });
    if ('socketPath' in address) server.listen(address.socketPath, () => resolve());
    else server.listen(address.port, address.host, () => resolve());
  });
}

export function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  return RecordingProxy.start(options);
}
