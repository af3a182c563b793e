/**
 * What the scripted model server does with one request. A test scripts a queue of steps, or answers each
 * request with a responder function that returns one.
 */

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** A JSON string, sent as is, or an object, serialised. */
  arguments: string | Record<string, unknown>;
}

export interface ReplySpec {
  content?: string | null;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Default: an approximate count (characters / 4) of the request and the reply. */
  usage?: {
    promptTokens?: number;
    completionTokens?: number;
    reasoningTokens?: number;
    /** Prompt tokens served from the cache (`prompt_tokens_details.cached_tokens`); default none reported. */
    cachedTokens?: number;
    /** The call's cost as OpenRouter reports it (`usage.cost`, US dollars); default none reported. */
    cost?: number;
  };
  /** Default: the model named in the request. */
  model?: string;
}

export interface Timing {
  /** Wait before the first byte of the response. */
  delayMs?: number;
}

export type Step =
  | ({
      kind: 'reply';
      reply: ReplySpec;
      chunkSize?: number;
      chunkDelayMs?: number;
      /** Drop the connection after this many chunks of the answer (`half`: half of them), as a dying server. */
      cutAfterChunks?: number | 'half';
    } & Timing)
  | ({ kind: 'status'; status: number; message?: string; retryAfterSeconds?: number } & Timing)
  /** Destroy the connection after `afterChunks` stream chunks (0: before any response byte). */
  | ({ kind: 'drop'; afterChunks: number } & Timing)
  /** A 200 response whose JSON (or first stream event) does not parse. */
  | ({ kind: 'malformed' } & Timing)
  /** End the response cleanly but early: after `afterChunks` chunks, with no finish reason and no `[DONE]`. */
  | ({ kind: 'truncate'; afterChunks: number } & Timing)
  /** Never answer (until the client gives up or the server closes). */
  | { kind: 'hang' };

type ReplyOptions = Omit<ReplySpec, 'content' | 'toolCalls'> &
  Timing & { chunkSize?: number; chunkDelayMs?: number };

function reply(spec: ReplySpec, options: ReplyOptions = {}): Step {
  const { delayMs, chunkSize, chunkDelayMs, ...rest } = options;
  return { kind: 'reply', reply: { ...spec, ...rest }, delayMs, chunkSize, chunkDelayMs };
}

/** Step constructors: `step.text('hi')`, `step.toolCall('agent', {prompt: '…'})`, `step.status(503)`… */
export const step = {
  reply,
  text: (content: string, options?: ReplyOptions): Step => reply({ content }, options),
  toolCall: (
    name: string,
    args: string | Record<string, unknown>,
    options?: ReplyOptions & { content?: string; id?: string },
  ): Step => {
    const { content, id, ...rest } = options ?? {};
    return reply({ content: content ?? null, toolCalls: [{ id, name, arguments: args }] }, rest);
  },
  toolCalls: (calls: ScriptedToolCall[], options?: ReplyOptions & { content?: string }): Step => {
    const { content, ...rest } = options ?? {};
    return reply({ content: content ?? null, toolCalls: calls }, rest);
  },
  status: (
    status: number,
    options: { message?: string; retryAfterSeconds?: number } & Timing = {},
  ): Step => ({
    kind: 'status',
    status,
    ...options,
  }),
  drop: (options: { afterChunks?: number } & Timing = {}): Step => ({
    kind: 'drop',
    afterChunks: options.afterChunks ?? 0,
    delayMs: options.delayMs,
  }),
  malformed: (options: Timing = {}): Step => ({ kind: 'malformed', ...options }),
  truncate: (options: { afterChunks?: number } & Timing = {}): Step => ({
    kind: 'truncate',
    afterChunks: options.afterChunks ?? 2,
    delayMs: options.delayMs,
  }),
  hang: (): Step => ({ kind: 'hang' }),
};
