import { z } from 'zod';

import { SystemError, UserError, errorMessage } from '../errors.js';
import { apiKeyFrom } from '../model/create-model.js';

/** The OpenAI-compatible server the roles talk to (vLLM for runtime LoRA loading). */
export interface InferenceServer {
  /** `http://host:8000/v1` (with or without `/v1`). */
  baseUrl: string;
  /** The environment variable holding the key; the key is sent, never logged or shown. */
  apiKeyEnv?: string;
  /** Per request (default 60 s: a first request after loading can be slow). */
  requestTimeoutMs?: number;
}

/** An entry of `GET /v1/models`; vLLM adds `root` (the weights' path) and `parent` (a LoRA's base model). */
export const ServedModel = z.looseObject({
  id: z.string(),
  root: z.string().nullish(),
  parent: z.string().nullish(),
});
export type ServedModel = z.infer<typeof ServedModel>;

const ModelList = z.object({ data: z.array(ServedModel) });
const ChatReply = z.looseObject({ choices: z.array(z.unknown()).min(1) });

export interface ServerReply {
  status: number;
  text: string;
  url: string;
}

/** The server without `/v1`: vLLM's adapter endpoints hang off `/v1` like the rest. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** One request; a server that cannot be reached is a `SystemError` naming the URL (never the key). */
export async function requestServer(
  server: InferenceServer,
  method: 'GET' | 'POST',
  endpoint: string,
  options: { body?: unknown; signal?: AbortSignal } = {},
): Promise<ServerReply> {
  const url = `${serverRoot(server.baseUrl)}${endpoint}`;
  const apiKey = apiKeyFrom(server.apiKeyEnv);
  const timeout = AbortSignal.timeout(server.requestTimeoutMs ?? 60_000);
  try {
    const response = await fetch(url, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
    return { status: response.status, text: await response.text(), url };
  } catch (error) {
    options.signal?.throwIfAborted();
    throw new SystemError(`${method} ${url} failed: ${describeFetchFailure(error)}`, { cause: error });
  }
}

/** `GET /v1/models`. */
export async function listServedModels(
  server: InferenceServer,
  signal?: AbortSignal,
): Promise<ServedModel[]> {
  const reply = await requestServer(server, 'GET', '/v1/models', { signal });
  if (reply.status !== 200) throw replyError(reply, 'GET');
  const parsed = ModelList.safeParse(parseJson(reply.text));
  if (!parsed.success) {
    throw new SystemError(`GET ${reply.url} did not return a model list: ${reply.text.slice(0, 200)}`);
  }
  return parsed.data.data;
}

/**
 * Checks that the server serves `model`: `GET /v1/models` lists it and one tiny chat request gets an answer.
 */
export async function checkServedModel(
  server: InferenceServer,
  model: string,
  signal?: AbortSignal,
): Promise<void> {
  const models = await listServedModels(server, signal);
  if (!models.some((served) => served.id === model)) {
    throw new SystemError(
      `${serverRoot(server.baseUrl)} does not list ${model} after deploying it; it serves ${namesOf(models)}`,
    );
  }
  const reply = await requestServer(server, 'POST', '/v1/chat/completions', {
    body: { model, messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 16, temperature: 0 },
    signal,
  });
  if (reply.status !== 200 || !ChatReply.safeParse(parseJson(reply.text)).success) {
    throw new SystemError(
      `${model} is listed by ${serverRoot(server.baseUrl)} but a chat request to it failed ` +
        `(${reply.status}): ${serverMessage(reply.text)}`,
    );
  }
}

/** A non-2xx reply as an error: 4xx the user's to fix, 5xx the server's. */
export function replyError(reply: ServerReply, method: string, advice = ''): Error {
  const message = `${method} ${reply.url} answered ${reply.status}: ${serverMessage(reply.text)}${advice}`;
  return reply.status >= 400 && reply.status < 500 ? new UserError(message) : new SystemError(message);
}

/** The error message of an OpenAI-style error body, or the start of the text. */
export function serverMessage(text: string): string {
  const body = parseJson(text);
  const parsed = z
    .object({ error: z.union([z.string(), z.object({ message: z.string() })]) })
    .or(z.object({ message: z.string() }))
    .safeParse(body);
  if (parsed.success) {
    const value = parsed.data;
    if ('message' in value) return value.message;
    return typeof value.error === 'string' ? value.error : value.error.message;
  }
  return text.slice(0, 300) || '(empty body)';
}

export function namesOf(models: ServedModel[]): string {
  return models.length === 0 ? 'no model' : models.map((model) => model.id).join(', ');
}

/** The JSON value of a reply's text, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describeFetchFailure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer in time';
  const cause = error instanceof Error ? error.cause : undefined;
  return cause ? errorMessage(cause) : errorMessage(error);
}
