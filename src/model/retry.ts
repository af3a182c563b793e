import { ModelBehaviourError, SystemError, UserError, type MassError } from '../errors.js';
import { timerDelay } from '../timer-duration.js';

/** How a call to a model endpoint failed, whatever the provider's SDK. */
export type CallFailure =
  | { kind: 'status'; status: number; message: string; retryAfterMs: number | null }
  | { kind: 'timeout'; message: string }
  | { kind: 'connection'; code: string | null; message: string }
  /** The server answered, but its bytes are not the protocol (malformed JSON, a stream cut short). */
  | { kind: 'invalid-response'; message: string }
  /** The model answered in a way we cannot use (no choices). Not retried: the same request would get the same. */
  | { kind: 'model-behaviour'; message: string };

export interface RetryPolicy {
  /** Attempts in all, the first included (default 5). */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** The longest `Retry-After` honoured; a server asking for more is waited for this long (default 2 min). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** A failed call that should not be retried, with the failure that stopped it. */
export class CallFailedError extends Error {
  constructor(readonly failure: CallFailure) {
    super(failure.message);
  }
}

const RETRYABLE_STATUSES = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const FATAL_CONNECTION_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_INVALID_URL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export function isRetryable(failure: CallFailure): boolean {
  switch (failure.kind) {
    case 'status':
      return RETRYABLE_STATUSES.has(failure.status) || failure.status >= 500;
    case 'connection':
      return !FATAL_CONNECTION_CODES.has(failure.code ?? '');
    case 'timeout':
    case 'invalid-response':
      return true;
    case 'model-behaviour':
      return false;
  }
}

/** Exponential back-off with jitter (half fixed, half random), or the server's `Retry-After` when it gave one. */
export function retryDelayMs(
  failure: CallFailure,
  attempt: number,
  policy: RetryPolicy,
  random = Math.random,
): number {
  if (failure.kind === 'status' && failure.retryAfterMs !== null) {
    return Math.min(Math.max(failure.retryAfterMs, 0), policy.maxRetryAfterMs);
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** `Retry-After` in seconds or as an HTTP date, or `retry-after-ms`; null when absent or unreadable. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined): number | null {
  if (!headers) return null;
  const milliseconds = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(milliseconds)) return milliseconds;
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

interface RetryContext {
  policy: RetryPolicy;
  /** Provider and endpoint for messages, e.g. `openai-compatible http://127.0.0.1:8000/v1`. */
  endpoint: string;
  model: string;
  signal?: AbortSignal;
  /** Turns a provider's exception into a failure; rethrows what is not a call failure (an abort, a bug). */
  describe: (error: unknown) => CallFailure;
  /** Extra advice for a final failure, e.g. the models the endpoint does serve. */
  advise?: (failure: CallFailure) => Promise<string | null>;
  onRetry?: (failure: CallFailure, attempt: number, delayMs: number) => void;
}

/** Runs `call` until it succeeds, a failure is not retryable, or the attempts run out; then throws a typed error. */
export async function withRetries<T>(
  call: (attempt: number) => Promise<T>,
  context: RetryContext,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let failure: CallFailure;
    try {
      return await call(attempt);
    } catch (error) {
      failure = error instanceof CallFailedError ? error.failure : context.describe(error);
    }
    if (!isRetryable(failure) || attempt >= context.policy.maxAttempts) {
      const advice = context.advise ? await context.advise(failure).catch(() => null) : null;
      throw finalError(failure, attempt, context, advice);
    }
    const delayMs = retryDelayMs(failure, attempt, context.policy);
    context.onRetry?.(failure, attempt, delayMs);
    await sleep(delayMs, context.signal);
  }
}

const failuresOfErrors = new WeakMap<object, CallFailure>();

/** The failure that ended a call, on an error `finalError` made; null for any other error. */
export function callFailureOf(error: unknown): CallFailure | null {
  return typeof error === 'object' && error !== null ? (failuresOfErrors.get(error) ?? null) : null;
}

/**
 * True when a call failed on its server's side in a way that may pass (refused or dropped connections, timeouts,
 * 429 and 5xx, a cut stream) and the retries ran out: an outage, not a mistake in the request or its answer.
 */
export function isTransportFailure(error: unknown): boolean {
  const failure = callFailureOf(error);
  return failure !== null && failure.kind !== 'model-behaviour' && isRetryable(failure);
}

/** The typed error for a failure that ends a call: a user's mistake, a system fault or bad model behaviour. */
export function finalError(
  failure: CallFailure,
  attempts: number,
  context: Pick<RetryContext, 'endpoint' | 'model'>,
  advice: string | null = null,
): MassError {
  const error = errorForFailure(failure, attempts, context, advice);
  failuresOfErrors.set(error, failure);
  return error;
}

function errorForFailure(
  failure: CallFailure,
  attempts: number,
  context: Pick<RetryContext, 'endpoint' | 'model'>,
  advice: string | null,
): MassError {
  const where = `${context.endpoint} (model "${context.model}")`;
  const tries = attempts === 1 ? '' : ` after ${attempts} attempts`;
  const suffix = advice ? ` ${advice}` : '';
  switch (failure.kind) {
    case 'status':
      if (failure.status === 401 || failure.status === 403) {
        return new UserError(
          `${where} refused the credentials (${failure.status}): ${failure.message}. Check the API key (the variable named by --api-key-env).`,
        );
      }
      if (failure.status === 404) {
        return new UserError(
          `${where} answered 404: ${failure.message}. Check the model name and that the base URL ends in /v1.${suffix}`,
        );
      }
      if (failure.status >= 400 && failure.status < 500 && !isRetryable(failure)) {
        return new UserError(
          `${where} rejected the request (${failure.status}): ${failure.message}${suffix}`,
        );
      }
      return new SystemError(
        `${where} kept failing${tries}: last status ${failure.status}: ${failure.message}`,
      );
    case 'connection':
      if (failure.code === 'ECONNREFUSED' || FATAL_CONNECTION_CODES.has(failure.code ?? '')) {
        return new UserError(
          `cannot connect to ${context.endpoint}${tries} (${failure.code}): is the model server running, and is the base URL right?`,
        );
      }
      return new SystemError(`${where}: the connection failed${tries}: ${failure.message}`);
    case 'timeout':
      return new SystemError(
        `${where}: no complete answer within the request timeout${tries}: ${failure.message}`,
      );
    case 'invalid-response':
      return new SystemError(`${where} sent an invalid response${tries}: ${failure.message}`);
    case 'model-behaviour':
      return new ModelBehaviourError(`${where}: ${failure.message}`);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, timerDelay(ms));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The first `code` (ECONNREFUSED, ECONNRESET…) along an error's chain of causes. */
export function errorCode(error: unknown): string | null {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth++) {
    if (typeof current === 'object' && current !== null) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string') return code;
      current = (current as { cause?: unknown }).cause;
    } else break;
  }
  return null;
}
