import { DEFAULT_CALL_RETRY } from '../config/fault-tolerance.js';
import { isRetryable, retryDelayMs, type CallFailure } from '../model/retry.js';

/**
 * How the recording proxy retries a call whose upstream failed before any byte of the answer reached the client: a
 * refused or reset connection, no response head in time, or a 429, 500, 502, 503 or 504. The client sees one slow
 * answer, not an error. Bounded by attempts and by the call's total time; the defaults ride out a model server
 * restart of two to three minutes.
 */
export interface UpstreamRetryPolicy {
  /** Attempts in all, the first included; 1 turns retrying off. */
  maxAttempts: number;
  /** No new attempt starts once the call has taken this long, waits included. */
  maxTotalMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** A streamed call with no response head by then is given up and retried; null: no limit. */
  responseHeadTimeoutMs: number | null;
}

export const DEFAULT_UPSTREAM_RETRY: UpstreamRetryPolicy = { ...DEFAULT_CALL_RETRY };

/** Statuses a model server answers while it loads, restarts or sheds load: the same request may succeed later. */
export const RETRYABLE_UPSTREAM_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** One failed attempt, as the retry decision sees it. */
export interface FailedAttempt {
  status: number | null;
  /** The connection error's code (ECONNREFUSED, ECONNRESET…), when there was no status. */
  code: string | null;
  message: string;
  retryAfterMs: number | null;
}

/**
 * The wait before the next attempt, or null when the call must give up: the failure is not transient, or the
 * attempts or the time are spent. Exponential back-off with jitter, or the server's `Retry-After`; never past the
 * call's time bound.
 */
export function upstreamRetryDelayMs(
  failed: FailedAttempt,
  attempt: number,
  elapsedMs: number,
  policy: UpstreamRetryPolicy,
  random: () => number = Math.random,
): number | null {
  const failure: CallFailure =
    failed.status !== null
      ? { kind: 'status', status: failed.status, message: failed.message, retryAfterMs: failed.retryAfterMs }
      : { kind: 'connection', code: failed.code, message: failed.message };
  if (failed.status !== null && !RETRYABLE_UPSTREAM_STATUSES.has(failed.status)) return null;
  if (!isRetryable(failure) || attempt >= policy.maxAttempts) return null;
  const remaining = policy.maxTotalMs - elapsedMs;
  if (remaining <= 0) return null;
  const delay = retryDelayMs(failure, attempt, { ...policy, maxRetryAfterMs: policy.maxTotalMs }, random);
  return Math.min(delay, remaining);
}
