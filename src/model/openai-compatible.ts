import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';

import { validateBaseUrl, isOpenAIHost } from './base-url.js';
import { collectEvents, requestBody, responseFromCompletion } from './chat-completion-wire.js';
import { endpointSemaphore, type Semaphore } from './concurrency.js';
import {
  CallFailedError,
  DEFAULT_RETRY_POLICY,
  finalError,
  isRetryable,
  withRetries,
  type CallFailure,
  type RetryPolicy,
} from './retry.js';
import { BilledAttempts } from './billed-usage.js';
import { replicaSetOf, type ReplicaLease, type ReplicaSet } from './replicas.js';
import { describeSdkFailure } from './sdk-failure.js';
import { StreamAccumulator } from './stream-accumulator.js';
import {
  tokenUsageFromWire,
  type CallOptions,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamEvent,
} from './types.js';

export interface OpenAICompatibleOptions {
  /** OpenAI-style base URL ending in `/v1`, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /**
   * Whose API it is: `openai-compatible` (vLLM, SGLang, llama.cpp: the full set of sampling parameters) or `openai`
   * (OpenAI's own: `max_completion_tokens`, no `top_k`, no chat-template switches). Default: `openai` for a base URL
   * on api.openai.com, `openai-compatible` otherwise.
   */
  dialect?: 'openai-compatible' | 'openai';
  /** The key; local servers (vLLM, llama.cpp, Ollama) usually need none. Never logged. */
  apiKey?: string;
  /** Per-request timeout in milliseconds (default 10 minutes). */
  timeoutMs?: number;
  /** Most requests in flight to this endpoint from this process (default 64). */
  maxConcurrency?: number;
  retry?: Partial<RetryPolicy>;
  onRetry?: (failure: CallFailure, attempt: number, delayMs: number) => void;
  /**
   * Replicas of the model (`src/model/replicas.ts`): each attempt goes to the least loaded healthy one. Default: the
   * replicas this process declared for `baseUrl`; null: `baseUrl` alone (a check of one server).
   */
  replicas?: ReplicaSet | null;
}

/** A model an endpoint serves, with the context length it lists (vLLM's `max_model_len`; null when not listed). */
export interface ListedModel {
  id: string;
  maxModelLength: number | null;
}

/** A `ChatModel` for any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, OpenAI), on the official SDK. */
export class OpenAICompatibleModel implements ChatModel {
  readonly endpoint: string;
  readonly dialect: 'openai-compatible' | 'openai';
  private readonly client: OpenAI;
  private readonly semaphore: Semaphore;
  private readonly retryPolicy: RetryPolicy;
  private readonly replicas: ReplicaSet | null;
  /** One client per replica address, made at first use. */
  private readonly replicaClients = new Map<string, OpenAI>();

  constructor(private readonly options: OpenAICompatibleOptions) {
    const baseUrl = validateBaseUrl(options.baseUrl);
    this.dialect = options.dialect ?? (isOpenAIHost(baseUrl) ? 'openai' : 'openai-compatible');
    this.replicas = options.replicas === undefined ? replicaSetOf(baseUrl) : options.replicas;
    const addresses = this.replicas?.addresses ?? [baseUrl];
    this.endpoint = `${this.dialect} ${addresses.join(' | ')}`;
    this.client = this.clientFor(baseUrl);
    // The limit is per address: replicas serve that many calls each.
    this.semaphore = endpointSemaphore(baseUrl, (options.maxConcurrency ?? 64) * addresses.length);
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  private clientFor(baseUrl: string): OpenAI {
    let client = this.replicaClients.get(baseUrl);
    if (client) return client;
    const timeout = this.options.timeoutMs ?? 10 * 60_000;
    // Node's own fetch stops waiting after 5 minutes whatever the SDK's timeout; give undici the same timeout.
    const dispatcher = new Agent({ headersTimeout: timeout, bodyTimeout: timeout });
    client = new OpenAI({
      baseURL: validateBaseUrl(baseUrl),
      apiKey: this.options.apiKey ?? 'not-needed',
      timeout,
      maxRetries: 0,
      fetch: undiciFetch as unknown as typeof fetch,
      fetchOptions: { dispatcher } as Record<string, unknown>,
    });
    this.replicaClients.set(baseUrl, client);
    return client;
  }

  /**
   * One attempt on the least loaded healthy replica (the one client without replicas). The lease is handed back by
   * `settle` (a failure that is the server's, not the request's, puts that replica in outage).
   */
  private onReplica(): { client: OpenAI; settle: (error?: unknown) => void } {
    const lease: ReplicaLease | null = this.replicas?.pick() ?? null;
    return {
      client: lease ? this.clientFor(lease.address) : this.client,
      settle: (error?: unknown) => {
        if (!lease) return;
        const failure =
          error === undefined
            ? null
            : error instanceof CallFailedError
              ? error.failure
              : this.describeFailure(error);
        lease.done(
          failure !== null && failure.kind !== 'model-behaviour' && isRetryable(failure) ? 'failed' : 'ok',
        );
      },
    };
  }

  async complete(request: ChatRequest, options: CallOptions = {}): Promise<ChatResponse> {
    // Built before any call: settings the provider refuses are the caller's mistake, not worth a retry.
    const body = { ...requestBody(request, this.dialect), stream: false };
    // An answer with usage that is retried or unusable was billed all the same: the call's usage counts it.
    const billed = new BilledAttempts();
    return this.withSlot(async () => {
      try {
        return billed.settle(
          await withRetries(
            async () => {
              const { client, settle } = this.onReplica();
              try {
                const completion: unknown = await client.chat.completions.create(body as never, {
                  signal: options.signal,
                });
                const response = billed.parse(completion, responseFromCompletion);
                settle();
                return response;
              } catch (error) {
                settle(error);
                throw error;
              }
            },
            this.retryContext(request, options),
          ),
        );
      } catch (error) {
        throw billed.fail(error);
      }
    });
  }

  async *stream(request: ChatRequest, options: CallOptions = {}): AsyncIterable<ChatStreamEvent> {
    const release = await this.semaphore.acquire();
    try {
      // Retried only until the first event reaches the caller: events already given cannot be taken back.
      let yielded = false;
      const events: ChatStreamEvent[] = [];
      const body = {
        ...requestBody(request, this.dialect),
        stream: true,
        stream_options: { include_usage: true },
      };
      let iterator: AsyncIterator<unknown> | null = null;
      let first: IteratorResult<unknown> | null = null;
      let settleStream: (error?: unknown) => void = () => {};
      await withRetries(
        async () => {
          const { client, settle } = this.onReplica();
          try {
            const created: unknown = await client.chat.completions.create(body as never, {
              signal: options.signal,
            });
            const chunks = created as AsyncIterable<unknown>;
            iterator = chunks[Symbol.asyncIterator]();
            first = await iterator.next();
          } catch (error) {
            settle(error);
            throw error;
          }
          // The replica carries the stream's load until it ends.
          settleStream = settle;
        },
        this.retryContext(request, options),
      );
      const accumulator = new StreamAccumulator();
      try {
        for (let result = first!; !result.done; result = await iterator!.next()) {
          events.length = 0;
          collectEvents(result.value, events);
          accumulator.push(result.value);
          for (const event of events) {
            yielded = true;
            yield event;
          }
        }
      } catch (error) {
        settleStream(error);
        const failure = this.describeFailure(error);
        throw await this.finalStreamError(failure, request, yielded);
      } finally {
        settleStream();
      }
      const reassembled = accumulator.result();
      if (reassembled.finish_reason === null) {
        throw await this.finalStreamError(
          {
            kind: 'invalid-response',
            message: 'the stream ended before the model finished (no finish reason)',
          },
          request,
          yielded,
        );
      }
      yield {
        type: 'finish',
        response: {
          id: reassembled.id ?? '',
          model: reassembled.model ?? request.model,
          message: reassembled.message,
          finishReason: reassembled.finish_reason,
          usage: tokenUsageFromWire(reassembled.usage),
        },
      };
    } finally {
      release();
    }
  }

  /** The model names the endpoint serves (`GET /models`). */
  async listModels(options: CallOptions = {}): Promise<string[]> {
    return (await this.servedModels(options)).map((model) => model.id);
  }

  /** The models the endpoint serves, with the context length each lists (vLLM lists `max_model_len`). */
  async servedModels(options: CallOptions = {}): Promise<ListedModel[]> {
    return withRetries(
      async () => {
        const page = await this.client.models.list({ signal: options.signal });
        return page.data.map((model) => {
          const listed: unknown = (model as unknown as Record<string, unknown>).max_model_len;
          return {
            id: model.id,
            maxModelLength:
              typeof listed === 'number' && Number.isInteger(listed) && listed > 0 ? listed : null,
          };
        });
      },
      this.retryContext({ model: '*', messages: [] }, options),
    );
  }

  private async finalStreamError(
    failure: CallFailure,
    request: ChatRequest,
    yielded: boolean,
  ): Promise<Error> {
    const stage = yielded ? 'mid-stream' : 'before the first token';
    const advice = await this.advise(failure, request.model).catch(() => null);
    return finalError(
      { ...failure, message: `${failure.message} (${stage})` },
      1,
      this.retryContext(request, {}),
      advice,
    );
  }

  private async withSlot<T>(run: () => Promise<T>): Promise<T> {
    const release = await this.semaphore.acquire();
    try {
      return await run();
    } finally {
      release();
    }
  }

  private retryContext(request: ChatRequest, options: CallOptions) {
    return {
      policy: this.retryPolicy,
      endpoint: this.endpoint,
      model: request.model,
      signal: options.signal,
      describe: (error: unknown) => this.describeFailure(error),
      advise: (failure: CallFailure) => this.advise(failure, request.model),
      onRetry: this.options.onRetry,
    };
  }

  private describeFailure(error: unknown): CallFailure {
    return describeSdkFailure(error, {
      APIUserAbortError,
      APIConnectionTimeoutError,
      APIConnectionError,
      APIError,
    });
  }

  /** For a 404, the models the endpoint does serve, so the user sees the right name at once. */
  private async advise(failure: CallFailure, model: string): Promise<string | null> {
    if (failure.kind !== 'status' || failure.status !== 404 || model === '*') return null;
    const page = await this.client.models.list();
    const served = page.data.map((entry) => entry.id);
    if (served.includes(model)) return null;
    return `The endpoint serves: ${served.map((name) => `"${name}"`).join(', ') || 'no models'}.`;
  }
}
