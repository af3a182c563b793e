import { createHash } from 'node:crypto';

import { canonicalJson } from '../canonical-json.js';
import { isRecord } from '../model/stream-accumulator.js';
import type { MessageContent } from '../model/types.js';
import { readProxyLog, type ProxyLogRow } from '../proxy/log-row.js';
import { ReplyServer, type ReceivedRequest } from '../toy/reply-server.js';
import type { ReplySpec, Step } from '../toy/steps.js';

/**
 * The status of a request the recordings have no answer for. Not a 5xx: the proxy and the model clients retry those,
 * and a miss stays a miss however often it is asked.
 */
export const REPLAY_MISS_STATUS = 422;

/** The fields of a chat request that decide its answer; the rest (stream, stream_options, seed, sampling) do not. */
const MATCHED_FIELDS = ['model', 'messages', 'tools', 'tool_choice', 'response_format'] as const;

/**
 * What a request is matched on: the canonical JSON (keys sorted) of its model, messages, tools, tool choice and
 * response format. Whether it streams, its sampling parameters and its seed are left out: the answer is streamed or
 * not as the new request asks, and a replay answers what was answered.
 */
export function replayKey(body: unknown): string {
  const record = isRecord(body) ? body : {};
  const kept = Object.fromEntries(MATCHED_FIELDS.map((field) => [field, record[field]]));
  return canonicalJson(kept);
}

/** A short name for a key in messages: its hash. */
function keyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** A request the recordings had no answer for. */
export interface ReplayMiss {
  request: ReceivedRequest;
  /** The hash of its key (`replayKey`), as the 422's message names it. */
  key: string;
  message: string;
}

export interface ReplayServerOptions {
  /** Proxy logs (`requests.jsonl`, any schema version) whose answered chat requests are replayed. */
  recordings: string[];
  host?: string;
  port?: number;
  /** Characters per streamed delta (default 16). */
  chunkSize?: number;
}

/** An answer's text; undefined when it holds a part that is not text (an image), which a replay cannot send. */
function textOf(content: MessageContent | null): string | null | undefined {
  if (content === null || typeof content === 'string') return content;
  const texts = content.map((part) =>
    part.type === 'text' && typeof part.text === 'string' ? part.text : undefined,
  );
  return texts.every((text) => text !== undefined) ? texts.join('') : undefined;
}

/** The answer a proxy log row recorded, as a reply to play again; null when the row holds none to replay. */
function recordedReply(row: ProxyLogRow): ReplySpec | null {
  if (row.method !== 'POST' || !row.path.endsWith('/chat/completions')) return null;
  if (row.status !== 200 || !row.requestIsJson || row.response?.kind !== 'completion') return null;
  const { message, finish_reason, usage, model } = row.response.completion;
  const content = textOf(message.content);
  if (content === undefined) return null;
  return {
    content,
    reasoning: message.reasoning_content,
    toolCalls: message.tool_calls?.map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    })),
    finishReason: finish_reason ?? undefined,
    usage: usage
      ? {
          promptTokens: usage.prompt_tokens,
          completionTokens: usage.completion_tokens,
          reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? undefined,
        }
      : undefined,
    model: model ?? undefined,
  };
}

/**
 * A model server that answers from recorded proxy logs: each chat request gets the answer recorded for the same
 * request (`replayKey`), streamed or not as the request asks. Requests recorded more than once with the same key
 * get their answers in recorded order, and the last one again after that (the same request sent again gets the same
 * answer). A request with no recorded answer gets a 422 naming it (its number, model, message count, key hash and
 * last message) and is kept in `misses`: a replay never answers what it did not record.
 *
 * Rows that recorded a failure, a refusal or an answer that is not a chat completion are not replayed; a request that
 * held a secret was recorded redacted and will not match.
 */
export class ReplayServer {
  readonly requests: ReceivedRequest[] = [];
  readonly misses: ReplayMiss[] = [];
  private readonly answers = new Map<string, ReplySpec[]>();
  private readonly served = new Map<string, number>();
  private server!: ReplyServer;

  private constructor() {}

  static async start(options: ReplayServerOptions): Promise<ReplayServer> {
    if (options.recordings.length === 0)
      throw new Error('replay server: no recordings given; pass the requests.jsonl files to replay');
    const replay = new ReplayServer();
    const models = new Set<string>();
    for (const file of options.recordings) {
      const rows = await readProxyLog(file);
      for (const row of rows) {
        const reply = recordedReply(row);
        if (!reply) continue;
        const key = replayKey(row.request);
        const list = replay.answers.get(key) ?? [];
        list.push(reply);
        replay.answers.set(key, list);
        if (row.model) models.add(row.model);
      }
    }
    if (replay.answers.size === 0)
      throw new Error(
        `replay server: ${options.recordings.join(', ')} hold no answered chat request to replay`,
      );
    replay.server = await ReplyServer.start({
      name: 'replay',
      models: [...models],
      host: options.host,
      port: options.port,
      chunkSize: options.chunkSize,
      onRequest: (request) => replay.requests.push(request),
      responder: (request) => replay.answer(request),
    });
    return replay;
  }

  /** Distinct requests the recordings answer. */
  get recorded(): number {
    return this.answers.size;
  }

  private answer(request: ReceivedRequest): Step {
    const key = replayKey(request.body);
    const list = this.answers.get(key);
    if (!list) return this.miss(request, key);
    const count = this.served.get(key) ?? 0;
    this.served.set(key, count + 1);
    return { kind: 'reply', reply: list[Math.min(count, list.length - 1)]! };
  }

  private miss(request: ReceivedRequest, key: string): Step {
    const body = isRecord(request.body) ? request.body : {};
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const last = JSON.stringify(messages.at(-1) ?? null).slice(0, 200);
    const hash = keyHash(key);
    const message =
      `replay server: request #${request.index} (model ${JSON.stringify(body.model ?? null)}, ` +
      `${messages.length} messages, key ${hash}) matches no recorded request among ${this.answers.size}; ` +
      `its last message: ${last}. Record the run again, or check what changed in the request.`;
    this.misses.push({ request, key: hash, message });
    return { kind: 'status', status: REPLAY_MISS_STATUS, message };
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return this.server.url;
  }

  /** The OpenAI-style base URL, ending in `/v1`. */
  get baseUrl(): string {
    return this.server.baseUrl;
  }

  /** Throws when any request missed, naming the first. */
  assertNoMisses(): void {
    const first = this.misses[0];
    if (first) throw new Error(`${this.misses.length} request(s) missed; the first: ${first.message}`);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export function startReplayServer(options: ReplayServerOptions): Promise<ReplayServer> {
  return ReplayServer.start(options);
}
