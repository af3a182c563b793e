import { errorMessage } from '../errors.js';
import { SseParser } from '../model/sse.js';
import { timerDelay } from '../timer-duration.js';

/**
 * The raw HTTP the checks speak: the server's answers exactly as sent (status, JSON or text, every stream event), so
 * that what a client library would tidy away (a tool call left in the text, a missing usage chunk) shows. The API key
 * goes in the header only; no message here ever holds it.
 */

export interface ServerTarget {
  /** OpenAI style, ending in `/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** Each request's time limit. */
  timeoutMs: number;
}

export type WireAnswer =
  { ok: true; status: number; body: unknown; text: string; elapsedMs: number } | { ok: false; error: string };

export interface StreamAnswer {
  status: number;
  /** The parsed `data:` events before `[DONE]`. */
  events: unknown[];
  /** Whether the stream ended with `data: [DONE]`. */
  done: boolean;
  /** The body, when the answer was not a stream (an error). */
  text: string;
  elapsedMs: number;
}

/** The base URL as it may be shown: without credentials in it, a query or a fragment. */
export function shownUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '(an address that does not parse)';
  }
}

/** `/v1/models` → `http://host/v1/models`, whatever the base URL's own path. */
function urlOf(target: ServerTarget, path: string): string {
  return `${target.baseUrl.replace(/\/+$/, '')}${path}`;
}

/** `/v1/load_lora_adapter` and the like sit at the server's root, beside `/v1`. */
export function rootUrlOf(target: ServerTarget, path: string): string {
  const url = new URL(target.baseUrl);
  url.pathname = path;
  url.search = '';
  return url.toString();
}

function headers(target: ServerTarget, json: boolean): Record<string, string> {
  return {
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
  };
}

/** Connection failures, said without the request (which has the key in its headers). */
function failure(url: string, error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const what =
    error instanceof Error && error.name === 'TimeoutError' ? 'no answer in time' : errorMessage(error);
  return `${shownUrl(url)}: ${withoutCredentials(`${what}${cause}`)}`;
}

/** A message with any `user:password@` of a URL in it taken out. */
function withoutCredentials(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/g, '//');
}

async function send(
  target: ServerTarget,
  url: string,
  init: { method: 'GET' | 'POST'; body?: unknown },
): Promise<WireAnswer> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: init.method,
      headers: headers(target, init.body !== undefined),
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(timerDelay(target.timeoutMs)),
    });
    const text = await response.text();
    return {
      ok: true,
      status: response.status,
      body: parseJson(text),
      text,
      elapsedMs: performance.now() - started,
    };
  } catch (error) {
    return { ok: false, error: failure(url, error) };
  }
}

export function getJson(target: ServerTarget, path: string): Promise<WireAnswer> {
  return send(target, urlOf(target, path), { method: 'GET' });
}

export function postJson(target: ServerTarget, path: string, body: unknown): Promise<WireAnswer> {
  return send(target, urlOf(target, path), { method: 'POST', body });
}

export function getFromRoot(target: ServerTarget, path: string): Promise<WireAnswer> {
  return send(target, rootUrlOf(target, path), { method: 'GET' });
}

export function postToRoot(target: ServerTarget, path: string, body: unknown): Promise<WireAnswer> {
  return send(target, rootUrlOf(target, path), { method: 'POST', body });
}

/** A streamed chat completion, every event kept. */
export async function postStream(
  target: ServerTarget,
  body: unknown,
): Promise<{ ok: true; answer: StreamAnswer } | { ok: false; error: string }> {
  const url = urlOf(target, '/chat/completions');
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: headers(target, true),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timerDelay(target.timeoutMs)),
    });
    const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!streamed || !response.body) {
      const text = await response.text();
      return {
        ok: true,
        answer: {
          status: response.status,
          events: [],
          done: false,
          text,
          elapsedMs: performance.now() - started,
        },
      };
    }
    const parser = new SseParser();
    const events: unknown[] = [];
    let done = false;
    for await (const chunk of response.body) {
      for (const event of parser.push(chunk)) {
        if (event.data.trim() === '[DONE]') done = true;
        else events.push(parseJson(event.data));
      }
    }
    return {
      ok: true,
      answer: { status: response.status, events, done, text: '', elapsedMs: performance.now() - started },
    };
  } catch (error) {
    return { ok: false, error: failure(url, error) };
  }
}

/** The error message in a JSON error body (OpenAI's, vLLM's or FastAPI's shape), else the text's head. */
export function errorText(answer: { body: unknown; text: string }): string {
  const body = answer.body as {
    error?: { message?: unknown } | string;
    message?: unknown;
    detail?: unknown;
  } | null;
  const candidates = [
    typeof body?.error === 'object' ? body.error?.message : body?.error,
    body?.message,
    body?.detail,
  ];
  const found = candidates.find((value) => typeof value === 'string');
  return typeof found === 'string' ? found : answer.text.slice(0, 200);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
