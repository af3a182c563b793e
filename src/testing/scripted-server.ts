import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

import { isRecord } from '../model/stream-accumulator.js';
import { cutMidStream, FaultInjector, type FaultPlanInput } from './fault-injection.js';
import { anthropicMessage, wireChunks, wireCompletion, type WireReplyContext } from './openai-wire.js';
import { strictRejection, type StrictMode, type StrictProvider } from './strict-requests.js';
import type { ReplySpec, Step } from './steps.js';

/** A request as the scripted server received it. */
export interface ScriptedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or `undefined` when the body was empty or not JSON. */
  body: unknown;
  rawBody: string;
  stream: boolean;
  receivedAt: number;
}

export type Responder = (request: ScriptedRequest) => Step | Promise<Step>;

export interface ScriptedServerOptions {
  /** Steps answered in order, before the responder is asked. */
  script?: Step[];
  /** Answers requests once the script is used up. */
  responder?: Responder;
  /** Served by `/v1/models`; when given, a request for any other model gets a 404 like vLLM's. */
  models?: string[];
  host?: string;
  port?: number;
  /** Characters per streamed delta (default 16). */
  chunkSize?: number;
  /** Field name for reasoning deltas: vLLM's `reasoning_content` (default) or the newer `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** Refuse what the provider's real API refuses, with its 400 (`src/testing/strict-requests.ts`). */
  strict?: StrictProvider | StrictMode;
  /** The context length `/v1/models` lists for every model (vLLM's `max_model_len`); strict mode enforces it. */
  maxModelLength?: number;
  /** Answer a share of chat requests with injected faults (`src/testing/fault-injection.ts`). */
  faults?: FaultPlanInput;
}

export class ScriptExhaustedError extends Error {}

const COMPLETION_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const ANTHROPIC_PATHS = new Set(['/v1/messages', '/messages']);

/**
 * A real HTTP server speaking the OpenAI chat-completions protocol (plus a minimal Anthropic Messages
 * endpoint), answering from a script, recording every request it receives, and injecting faults on demand.
 */
export class ScriptedServer {
  readonly requests: ScriptedRequest[] = [];
  /** Requests that found no step to answer them (each answered with a 500). */
  readonly unanswered: ScriptedRequest[] = [];
  /** Requests strict mode refused (each answered with the provider's 400). */
  readonly rejected: ScriptedRequest[] = [];
  private readonly queue: Step[];
  private readonly hanging = new Set<ServerResponse>();
  private completionCounter = 0;
  /** The faults this server injects, when its options ask for some. */
  readonly faults: FaultInjector | null;

  private constructor(
    private readonly server: Server,
    private readonly options: ScriptedServerOptions,
  ) {
    this.queue = [...(options.script ?? [])];
    this.faults = options.faults ? new FaultInjector(options.faults) : null;
  }

  static async start(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
    const server = createServer();
    const scripted = new ScriptedServer(server, options);
    server.on('request', (request, response) => {
      scripted.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
        else response.destroy();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return scripted;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `http://${address.address}:${address.port}`;
  }

  /** The OpenAI-style base URL, ending in `/v1`. */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  enqueue(...steps: Step[]): void {
    this.queue.push(...steps);
  }

  /** Steps scripted but not used yet. */
  get remaining(): number {
    return this.queue.length;
  }

  /** Throws when a request found no step, or when scripted steps were never used. */
  assertDone(): void {
    if (this.unanswered.length > 0) {
      const first = this.unanswered[0]!;
      throw new ScriptExhaustedError(
        `scripted server: ${this.unanswered.length} request(s) had no step left, the first #${first.index} ${first.method} ${first.path}`,
      );
    }
    if (this.queue.length > 0)
      throw new ScriptExhaustedError(`scripted server: ${this.queue.length} step(s) never used`);
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawBody = await readBody(request);
    const path = (request.url ?? '/').split('?')[0]!;
    const body = parseJson(rawBody);
    const recorded: ScriptedRequest = {
      index: this.requests.length,
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body,
      rawBody,
      stream: isRecord(body) && body.stream === true,
      receivedAt: Date.now(),
    };
    this.requests.push(recorded);

    if (request.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const models = this.options.models ?? ['scripted-model'];
      sendJson(response, 200, {
        object: 'list',
        data: models.map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'mass-scripted',
          ...(this.options.maxModelLength === undefined
            ? {}
            : { max_model_len: this.options.maxModelLength }),
        })),
      });
      return;
    }
    const anthropic = ANTHROPIC_PATHS.has(path);
    if (request.method !== 'POST' || !(COMPLETION_PATHS.has(path) || anthropic)) {
      sendJson(response, 404, { error: { message: `scripted server: no route ${request.method} ${path}` } });
      return;
    }
    if (!isRecord(body)) {
      sendJson(response, 400, { error: { message: 'request body must be a JSON object' } });
      return;
    }
    const model = typeof body.model === 'string' ? body.model : '';
    if (this.options.models && !this.options.models.includes(model)) {
      sendJson(response, 404, {
        error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 },
      });
      return;
    }
    if (this.options.strict) {
      const mode =
        typeof this.options.strict === 'string' ? { provider: this.options.strict } : this.options.strict;
      const rejection = strictRejection(mode, {
        body,
        headers: request.headers,
        maxModelLength: this.options.maxModelLength,
      });
      if (rejection) {
        this.rejected.push(recorded);
        sendJson(response, rejection.status, rejection.body);
        return;
      }
    }

    // A fault before the answer is drawn first, so a stateful responder is not asked for an answer never given.
    const fault = this.faults?.next() ?? { kind: 'none' };
    const next = fault.kind === 'before-answer' ? fault.step : await this.nextStep(recorded);
    if (!next) {
      this.unanswered.push(recorded);
      sendJson(response, 500, {
        error: { message: `scripted server: request #${recorded.index} has no scripted step left` },
      });
      return;
    }
    const context: WireReplyContext = {
      completionId: `scripted-${++this.completionCounter}`,
      model,
      created: Math.floor(recorded.receivedAt / 1000),
      promptCharacters: JSON.stringify(body.messages ?? '').length,
      reasoningField: this.options.reasoningField ?? 'reasoning_content',
    };
    await this.play(
      fault.kind === 'cut-answer' ? cutMidStream(next) : next,
      recorded,
      context,
      anthropic,
      response,
    );
  }

  private async nextStep(request: ScriptedRequest): Promise<Step | undefined> {
    const queued = this.queue.shift();
    if (queued) return queued;
    return this.options.responder ? await this.options.responder(request) : undefined;
  }

  private async play(
    step: Step,
    request: ScriptedRequest,
    context: WireReplyContext,
    anthropic: boolean,
    response: ServerResponse,
  ): Promise<void> {
    if (step.kind === 'hang') {
      this.hanging.add(response);
      response.on('close', () => this.hanging.delete(response));
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
          { error: { message: step.message ?? `scripted failure ${step.status}`, code: step.status } },
          headers,
        );
        return;
      }
      case 'malformed':
        if (request.stream) {
          startStream(response);
          response.end('data: {"id": "scripted", "choices": [{"delta": {"content": "unterminated\n\n');
        } else {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end('{"id": "scripted", "choices": [ not json');
        }
        return;
      case 'reply':
        if (step.cutAfterChunks !== undefined) {
          await this.cutReply(step.reply, step.cutAfterChunks, step.chunkSize, request, context, response);
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
        await this.streamChunks(
          response,
          request,
          wireChunks(step.reply, context, this.chunkOptions(request, step.chunkSize)),
          {
            chunkDelayMs: step.chunkDelayMs,
          },
        );
        return;
      case 'drop':
      case 'truncate': {
        const fullReply = {
          content: 'This reply is cut short by the scripted server on purpose.',
          reasoning: 'thinking',
        };
        if (step.afterChunks === 0 && step.kind === 'drop') {
          // Before any response byte, the response head included: a connection reset.
          response.socket?.destroy();
          return;
        }
        if (!request.stream) {
          const text = JSON.stringify(wireCompletion(fullReply, context));
          response.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          });
          response.write(text.slice(0, Math.floor(text.length / 2)));
          if (step.kind === 'drop') response.socket?.destroy();
          else response.end();
          return;
        }
        const chunks = wireChunks(fullReply, context, { chunkSize: 4, includeUsage: false });
        await this.streamChunks(response, request, chunks.slice(0, step.afterChunks), {
          end: step.kind === 'truncate' ? 'end' : 'destroy',
        });
      }
    }
  }

  /** Sends the first part of a real answer, then drops the connection: a server dying mid-answer. */
  private async cutReply(
    reply: ReplySpec,
    cutAfter: number | 'half',
    chunkSize: number | undefined,
    request: ScriptedRequest,
    context: WireReplyContext,
    response: ServerResponse,
  ): Promise<void> {
    if (!request.stream) {
      const text = JSON.stringify(wireCompletion(reply, context));
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      response.write(text.slice(0, Math.floor(text.length / 2)));
      await sleep(5);
      response.socket?.destroy();
      return;
    }
    const chunks = wireChunks(reply, context, this.chunkOptions(request, chunkSize));
    const kept = cutAfter === 'half' ? Math.max(1, Math.floor(chunks.length / 2)) : cutAfter;
    await this.streamChunks(response, request, chunks.slice(0, kept), { end: 'destroy' });
  }

  private chunkOptions(request: ScriptedRequest, chunkSize?: number) {
    const body = isRecord(request.body) ? request.body : {};
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    return {
      chunkSize: chunkSize ?? this.options.chunkSize ?? 16,
      includeUsage: streamOptions.include_usage === true,
    };
  }

  private async streamChunks(
    response: ServerResponse,
    _request: ScriptedRequest,
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
}

export function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  return ScriptedServer.start(options);
}

function startStream(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.flushHeaders();
}

function sendJson(
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

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
