import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import {
  Agent as HttpAgent,
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

import { UserError, errorMessage } from '../errors.js';
import { errorCode, parseRetryAfter } from '../model/retry.js';
import { isRecord, type ReassembledCompletion } from '../model/stream-accumulator.js';
import { AssistantMessage, tokenUsageFromWire, type WireUsage } from '../model/types.js';
import { JsonlAppender } from './jsonl-appender.js';
import type { ProxyLogRow, RecordedResponse, UpstreamAttempt } from './log-row.js';
import { parseJson, SseRecorder, type ParsedJson } from './sse-recorder.js';
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
  /** Called with each row (its request body left out: it can be large) once it is written, as requests end. */
  onRow?: (row: ProxyLogRow) => void;
}

/** Text bodies (error pages and the like) are kept up to this many characters. */
const MAX_TEXT_CHARACTERS = 64 * 1024;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'accept-encoding',
]);
/** A path the proxy answers itself: the running token totals. */
export const USAGE_PATH = '/_mass/usage';

/**
 * A reverse proxy between an agent harness and its model server that records every request: one JSONL row
 * per request, written when it ends. Streams are relayed as they arrive and reassembled for the log.
 */
export class RecordingProxy {
  readonly meter = new TokenMeter();
  private sequence = 0;
  private budgetSpent = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly upstreamUrl: URL;
  private readonly agent: HttpAgent;
  private readonly retry: UpstreamRetryPolicy;

  private constructor(
    private readonly server: Server,
    private readonly log: JsonlAppender,
    private readonly options: RecordingProxyOptions,
  ) {
    this.upstreamUrl = parseUpstream(options.upstream);
    this.retry = { ...DEFAULT_UPSTREAM_RETRY, ...options.retry };
    const agentOptions = { keepAlive: true, maxSockets: Infinity };
    this.agent =
      this.upstreamUrl.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  }

  static async start(options: RecordingProxyOptions): Promise<RecordingProxy> {
    parseUpstream(options.upstream);
    const server = createServer();
    const proxy = new RecordingProxy(server, new JsonlAppender(options.logFile), options);
    server.on('request', (request, response) => {
      const handled = proxy.handle(request, response);
      proxy.inFlight.add(handled);
      void handled.finally(() => proxy.inFlight.delete(handled));
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

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const seq = this.sequence++;
    const startedAt = Date.now();
    const started = performance.now();
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const secrets = secretsOf(request.headers);
    if (this.options.upstreamApiKey) secrets.push(this.options.upstreamApiKey);

    let requestBytes: Buffer;
    try {
      requestBytes = await readAll(request);
    } catch {
      return; // The client went away before sending its request: nothing to relay or record.
    }
    if (method === 'GET' && path === USAGE_PATH) {
      sendJson(response, 200, this.meter.snapshot());
      return;
    }

    const parsed = parseJson(requestBytes);
    const body = parsed.ok ? parsed.value : null;
    const isCompletion =
      method === 'POST' && path.split('?')[0]!.endsWith('/chat/completions') && isRecord(body);
    const stream = isCompletion && isRecord(body) && body.stream === true;
    const model = isRecord(body) && typeof body.model === 'string' ? body.model : null;
    let upstreamBody = requestBytes;
    let usageInjected = false;
    if (stream && isRecord(body) && (this.options.meterStreams ?? true)) {
      const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
      if (streamOptions.include_usage !== true) {
        upstreamBody = Buffer.from(
          JSON.stringify({ ...body, stream_options: { ...streamOptions, include_usage: true } }),
        );
        usageInjected = true;
      }
    }

    const budget = this.options.outputBudget;
    const overBudget = isCompletion && budget !== undefined && this.meter.completionTokens >= budget;
    if (overBudget) this.budgetSpent = true;
    const exchange: Exchange & { attempts?: UpstreamAttempt[] } = overBudget
      ? refuse(response, 400, `mass proxy: the output budget of ${budget} completion tokens is spent`)
      : await this.relay(request, response, { method, path, upstreamBody, stream, usageInjected });

    const completion = exchange.response?.kind === 'completion' ? exchange.response.completion : null;
    const failed = exchange.error !== null || exchange.status === null || exchange.status >= 400;
    this.meter.record(model ?? completion?.model ?? 'unknown', tokenUsageFromWire(completion?.usage), failed);
    const endedAt = Date.now();
    const row: Omit<ProxyLogRow, 'request'> = {
      schemaVersion: 1,
      seq,
      startedAt: new Date(startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      method,
      path,
      status: exchange.status,
      model,
      stream,
      requestIsJson: parsed.ok,
      response: exchange.response,
      bytes: { request: requestBytes.length, response: exchange.responseBytes },
      clientDisconnected: exchange.clientDisconnected,
      usageInjected,
      error: exchange.error,
      attempts: exchange.attempts ?? [],
    };
    await this.log.append(redact(serializeRow(row, requestBytes, parsed), secrets));
    this.options.onRow?.({ ...row, request: null });
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
  ): Promise<Exchange & { attempts: UpstreamAttempt[] }> {
    const exchange: Exchange = {
      status: null,
      response: null,
      responseBytes: 0,
      clientDisconnected: false,
      error: null,
    };
    const attempts: UpstreamAttempt[] = [];
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
      const outcome = await this.attempt(request, response, call, exchange, connection, cutStream);
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
      const message = `mass proxy: upstream ${this.upstreamUrl.origin} unreachable or failed: ${failed.message}${tries}`;
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
    if (response.destroyed) return;
    response.writeHead(failed.status, relayedHeaders(failed.headers, false));
    response.end(failed.body);
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
    resume: SseRecorder | null,
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
        response.destroy();
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
      const target = upstreamTarget(this.upstreamUrl, call.path);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const upstream = send(target, {
        method: call.method,
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

      upstream.on('response', (upstreamResponse) => {
        clearTimeout(headTimer);
        const status = upstreamResponse.statusCode ?? 502;
        const contentType = upstreamResponse.headers['content-type'] ?? '';
        if (RETRYABLE_UPSTREAM_STATUSES.has(status)) {
          // Kept back from the client: it is retried, or handed on whole once retrying is over.
          const chunks: Buffer[] = [];
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
          upstreamResponse.on('data', (chunk: Buffer) => chunks.push(chunk));
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
          response.writeHead(status, relayedHeaders(upstreamResponse.headers, isSse));
          response.flushHeaders();
          recorder = isSse ? new SseRecorder(call.usageInjected) : new BodyRecorder();
          // Only a successful stream can be replayed and joined: an error body is what the server meant.
          if (recorder instanceof SseRecorder && status < 300) streaming = recorder;
        }
        upstreamResponse.on('data', (chunk: Buffer) => {
          if (settled) return;
          exchange.responseBytes += chunk.length;
          const relayed = recorder.push(chunk);
          if (relayed.length > 0 && !response.destroyed) response.write(relayed);
          if (recorder instanceof SseRecorder && recorder.diverged !== null) {
            upstream.destroy();
            cutOff(
              `upstream dropped the connection mid-response; its replay differed from what was relayed at event ${recorder.diverged + 1}`,
            );
          }
        });
        upstreamResponse.on('end', () => {
          if (settled) return;
          const outcome = recorder.finish(contentType);
          exchange.response = outcome.response;
          exchange.error = outcome.error;
          response.end(() => settle('relayed'));
        });
        upstreamResponse.on('aborted', () => {
          if (settled) return;
          const message = `upstream dropped the connection mid-response after ${exchange.responseBytes} bytes`;
          if (streaming) cutMidStream(message);
          else {
            exchange.response = recorder.finish(contentType).response;
            cutOff(message);
          }
        });
      });

      upstream.end(call.upstreamBody);
    });
  }
}

interface RelayedCall {
  method: string;
  path: string;
  upstreamBody: Buffer;
  stream: boolean;
  usageInjected: boolean;
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

interface Exchange {
  status: number | null;
  response: RecordedResponse | null;
  responseBytes: number;
  clientDisconnected: boolean;
  error: string | null;
}

interface Recorder {
  /** Takes upstream bytes; returns the bytes to relay to the client now. */
  push(chunk: Buffer): Buffer;
  finish(contentType: string): { response: RecordedResponse | null; error: string | null };
}

/** Relays a plain body as it arrives and keeps it to record. */
class BodyRecorder implements Recorder {
  private readonly chunks: Buffer[] = [];

  push(chunk: Buffer): Buffer {
    this.chunks.push(chunk);
    return chunk;
  }

  finish(contentType: string): { response: RecordedResponse | null; error: string | null } {
    const bytes = Buffer.concat(this.chunks);
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
  return url;
}

/** The upstream URL for an incoming path; `/v1` is not doubled when the upstream already ends in it. */
export function upstreamTarget(upstream: URL, incomingPath: string): URL {
  let prefix = upstream.pathname.replace(/\/+$/, '');
  if (
    prefix.endsWith('/v1') &&
    (incomingPath === '/v1' || incomingPath.startsWith('/v1/') || incomingPath.startsWith('/v1?'))
  ) {
    prefix = prefix.slice(0, -3);
  }
  return new URL(`${upstream.origin}${prefix}${incomingPath}`);
}

function forwardedHeaders(
  headers: IncomingHttpHeaders,
  target: URL,
  contentLength: number,
  upstreamApiKey: string | undefined,
): OutgoingHttpHeaders {
  const forwarded: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) forwarded[name] = value;
  }
  if (upstreamApiKey) {
    delete forwarded['x-api-key'];
    forwarded.authorization = `Bearer ${upstreamApiKey}`;
  }
  forwarded.host = target.host;
  forwarded['content-length'] = contentLength;
  return forwarded;
}

function relayedHeaders(headers: IncomingHttpHeaders, bodyChanges: boolean): OutgoingHttpHeaders {
  const relayed: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || (HOP_BY_HOP.has(name) && name !== 'content-length')) continue;
    if (name === 'content-length' && bodyChanges) continue;
    relayed[name] = value;
  }
  return relayed;
}

/** Credentials a request carries, to scrub from its log row wherever they appear (an echoed error, a prompt). */
function secretsOf(headers: IncomingHttpHeaders): string[] {
  const secrets: string[] = [];
  const authorization = headers.authorization;
  if (authorization) {
    secrets.push(authorization);
    const token = authorization.replace(/^\s*(bearer|basic|token)\s+/i, '').trim();
    if (token.length >= 4) secrets.push(token);
  }
  for (const name of ['x-api-key', 'api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value.length >= 4) secrets.push(value);
  }
  return secrets;
}

function redact(text: string, secrets: string[]): string {
  let redacted = text;
  for (const secret of secrets) {
    if (redacted.includes(secret)) redacted = redacted.replaceAll(secret, '[REDACTED]');
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && redacted.includes(escaped))
      redacted = redacted.replaceAll(escaped, '[REDACTED]');
  }
  return redacted;
}

function readAll(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
    request.on('aborted', () => reject(new Error('client aborted the request')));
  });
}

/** Answers a request itself, with an OpenAI-style error, and describes the exchange for the log. */
function refuse(response: ServerResponse, status: number, message: string): Exchange {
  const body = { error: { message, type: 'mass_proxy_refusal' } };
  sendJson(response, status, body);
  return {
    status,
    response: { kind: 'json', body },
    responseBytes: Buffer.byteLength(JSON.stringify(body)),
    clientDisconnected: false,
    error: message,
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
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
