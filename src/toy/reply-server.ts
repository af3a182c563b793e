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
import type { WireReplyContext } from './openai-wire.js';
import { playStep, sendJson, type Playback } from './reply-playback.js';
import { asSampled, asServed, RuntimeLora, toolChoiceRefusal, type ServerFlags } from './server-flags.js';
import type { Step } from './steps.js';

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

  private get playback(): Playback {
    return { name: this.name, hanging: this.hanging, chunkSize: this.options.chunkSize, flags: this.flags };
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
    await playStep(
      this.playback,
      fault.kind === 'cut-answer' ? cutMidStream(next) : next,
      received,
      context,
      anthropic,
      response,
    );
  }
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
