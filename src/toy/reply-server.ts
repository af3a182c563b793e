import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

import { isRecord } from '../model/stream-accumulator.js';
import type { FaultPlanInput } from '../config/fault-plan.js';
import { cutMidStream, FaultInjector } from './fault-injection.js';
import { anthropicMessage, wireChunks, wireCompletion, type WireReplyContext } from './openai-wire.js';
import { asSampled, asServed, RuntimeLora, toolChoiceRefusal, type ServerFlags } from './server-flags.js';
import type { ReplySpec, Step } from './steps.js';

/** A request as the reply server received it. */
export interface ReceivedRequest {
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

/** The answer to one chat request; `undefined`: there is none (answered with a 500). */
export type Responder = (request: ReceivedRequest) => Step | undefined | Promise<Step | undefined>;

/** A refusal before any answer is drawn: the status and JSON body a real provider would send. */
export interface Refusal {
  status: number;
  body: unknown;
}

export interface ReplyServerOptions {
  responder: Responder;
  /** Served by `/v1/models`; when given, a request for any other model gets a 404 like vLLM's. */
  models?: string[];
  host?: string;
  port?: number;
  /** Characters per streamed delta (default 16). */
  chunkSize?: number;
  /** Field name for reasoning deltas: vLLM's `reasoning_content` (default) or the newer `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** The context length `/v1/models` lists for every model (vLLM's `max_model_len`). */
  maxModelLength?: number;
  /** Answer a share of chat requests with injected faults (`src/toy/fault-injection.ts`). */
  faults?: FaultPlanInput;
  /** Names the server in its error messages and its completion ids (default `reply`). */
  name?: string;
  /** Sees every request as it arrives, before it is answered. */
  onRequest?: (request: ReceivedRequest) => void;
  /** Refuses a chat request before it is answered (after the model check), or lets it through. */
  refuse?: (request: ReceivedRequest & { body: Record<string, unknown> }) => Refusal | undefined;
  /** Answers a chat request before faults are drawn and the responder is asked, or leaves it to them. */
  answerFirst?: (request: ReceivedRequest & { body: Record<string, unknown> }) => Step | undefined;
  /** How the emulated vLLM was started (`src/toy/server-flags.ts`); default: every flag given, no runtime LoRA. */
  flags?: ServerFlags;
}

const COMPLETION_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const ANTHROPIC_PATHS = new Set(['/v1/messages', '/messages']);

/**
 * A real HTTP server speaking the OpenAI chat-completions protocol (plus a minimal Anthropic Messages endpoint),
 * answering each request with what its responder returns, streamed or not as asked, and injecting faults on demand.
 * The toy model is served by one; the tests' scripted server is another.
 */
export class ReplyServer {
  private readonly hanging = new Set<ServerResponse>();
  private completionCounter = 0;
  private received = 0;
  /** The faults this server injects, when its options ask for some. */
  readonly faults: FaultInjector | null;
  /** The adapters loaded at run time, when its flags give it LoRA routes. */
  readonly lora: RuntimeLora;

  private constructor(
    private readonly server: Server,
    private readonly options: ReplyServerOptions,
  ) {
    this.faults = options.faults ? new FaultInjector(options.faults) : null;
    this.lora = new RuntimeLora(options.flags ?? {});
  }

  private get flags(): ServerFlags {
    return this.options.flags ?? {};
  }

  static async start(options: ReplyServerOptions): Promise<ReplyServer> {
    const server = createServer();
    const replying = new ReplyServer(server, options);
    server.on('request', (request, response) => {
      replying.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
        else response.destroy();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return replying;
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

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private get name(): string {
    return this.options.name ?? 'reply';
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawBody = await readBody(request);
    const path = (request.url ?? '/').split('?')[0]!;
    const body = parseJson(rawBody);
    const received: ReceivedRequest = {
      index: this.received++,
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body,
      rawBody,
      stream: isRecord(body) && body.stream === true,
      receivedAt: Date.now(),
    };
    this.options.onRequest?.(received);

    const loraAnswer = this.lora.answer(received.method, path, body);
    if (loraAnswer) {
      if (typeof loraAnswer.body === 'string') {
        response.writeHead(loraAnswer.status, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(loraAnswer.body);
      } else sendJson(response, loraAnswer.status, loraAnswer.body);
      return;
    }
    if (request.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const models = this.options.models ?? [`${this.name}-model`];
      sendJson(response, 200, {
        object: 'list',
        data: [
          ...models.map((id) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: 'mass',
            ...(this.options.maxModelLength === undefined
              ? {}
              : { max_model_len: this.options.maxModelLength }),
          })),
          ...[...this.lora.loaded].map(([id, root]) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: 'mass',
            root,
            parent: models[0] ?? null,
          })),
        ],
      });
      return;
    }
    const anthropic = ANTHROPIC_PATHS.has(path);
    if (request.method !== 'POST' || !(COMPLETION_PATHS.has(path) || anthropic)) {
      sendJson(response, 404, {
        error: { message: `${this.name} server: no route ${request.method} ${path}` },
      });
      return;
    }
    if (!isRecord(body)) {
      sendJson(response, 400, { error: { message: 'request body must be a JSON object' } });
      return;
    }
    const model = typeof body.model === 'string' ? body.model : '';
    if (this.options.models && !this.options.models.includes(model) && !this.lora.loaded.has(model)) {
      sendJson(response, 404, {
        error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 },
      });
      return;
    }
    const refusal = this.options.refuse?.({ ...received, body }) ?? toolChoiceRefusal(body, this.flags);
    if (refusal) {
      sendJson(response, refusal.status, refusal.body);
      return;
    }

    const sampled = { ...received, body: asSampled(body, this.flags) as Record<string, unknown> };
    const first = this.options.answerFirst?.(sampled);
    // A fault before the answer is drawn first, so a stateful responder is not asked for an answer never given.
    const fault = first ? { kind: 'none' as const } : (this.faults?.next() ?? { kind: 'none' as const });
    const drawn =
      first ?? (fault.kind === 'before-answer' ? fault.step : await this.options.responder(sampled));
    const next = drawn?.kind === 'reply' ? { ...drawn, reply: asServed(drawn.reply, this.flags) } : drawn;
    if (!next) {
      sendJson(response, 500, {
        error: { message: `${this.name} server: request #${received.index} has no answer` },
      });
      return;
    }
    const context: WireReplyContext = {
      completionId: `${this.name}-${++this.completionCounter}`,
      model,
      created: Math.floor(received.receivedAt / 1000),
      promptCharacters: JSON.stringify(body.messages ?? '').length,
      reasoningField: this.options.reasoningField ?? 'reasoning_content',
    };
    await this.play(
      fault.kind === 'cut-answer' ? cutMidStream(next) : next,
      received,
      context,
      anthropic,
      response,
    );
  }

  private async play(
    step: Step,
    request: ReceivedRequest,
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
          { error: { message: step.message ?? `${this.name} failure ${step.status}`, code: step.status } },
          headers,
        );
        return;
      }
      case 'malformed':
        if (request.stream) {
          startStream(response);
          response.end(`data: {"id": "${this.name}", "choices": [{"delta": {"content": "unterminated\n\n`);
        } else {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(`{"id": "${this.name}", "choices": [ not json`);
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
          content: 'This reply is cut short by the server on purpose.',
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
    request: ReceivedRequest,
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

  private chunkOptions(request: ReceivedRequest, chunkSize?: number) {
    const body = isRecord(request.body) ? request.body : {};
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    return {
      chunkSize: chunkSize ?? this.options.chunkSize ?? 16,
      includeUsage: streamOptions.include_usage === true && this.flags.streamUsage !== false,
    };
  }

  private async streamChunks(
    response: ServerResponse,
    _request: ReceivedRequest,
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
