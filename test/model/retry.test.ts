import { describe, expect, it } from 'vitest';

import { ModelBehaviourError } from '../../src/errors.js';
import {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
  type CallFailure,
} from '../../src/model/retry.js';

const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });
const status = (code: number, retryAfterMs: number | null = null): CallFailure => ({
  kind: 'status',
  status: code,
  message: 'x',
  retryAfterMs,
});

describe('retry policy', () => {
  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '3' }))).toBe(3000);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250' }))).toBe(250);
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    expect(parseRetryAfter(headers({ 'retry-after': inTwoSeconds }))).toBeGreaterThan(500);
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }))).toBeNull();
    expect(parseRetryAfter(headers({}))).toBeNull();
  });

  it('backs off exponentially with jitter, capped, and prefers the server’s Retry-After', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(status(503), 1, policy, () => 0)).toBe(50);
    expect(retryDelayMs(status(503), 1, policy, () => 1)).toBe(100);
    expect(retryDelayMs(status(503), 3, policy, () => 1)).toBe(400);
    expect(retryDelayMs(status(503), 10, policy, () => 1)).toBe(1000);
    expect(retryDelayMs(status(429, 7000), 1, policy)).toBe(7000);
    expect(retryDelayMs(status(429, 10_000_000), 1, policy)).toBe(policy.maxRetryAfterMs);
  });

  it('retries rate limits, server faults, timeouts and dropped connections; not mistakes or bad model output', () => {
    for (const code of [408, 429, 500, 502, 503, 504, 529]) expect(isRetryable(status(code))).toBe(true);
    for (const code of [400, 401, 403, 404, 422]) expect(isRetryable(status(code))).toBe(false);
    expect(isRetryable({ kind: 'connection', code: 'ECONNRESET', message: '' })).toBe(true);
    expect(isRetryable({ kind: 'connection', code: 'ENOTFOUND', message: '' })).toBe(false);
    expect(isRetryable({ kind: 'model-behaviour', message: '' })).toBe(false);
  });

  it('raises a model-behaviour error at once for unusable output', async () => {
    let calls = 0;
    const run = withRetries(
      () => {
        calls++;
        return Promise.reject(new Error('no choices'));
      },
      {
        policy: DEFAULT_RETRY_POLICY,
        endpoint: 'test endpoint',
        model: 'm',
        describe: (error) => ({ kind: 'model-behaviour', message: (error as Error).message }),
      },
    );
    await expect(run).rejects.toBeInstanceOf(ModelBehaviourError);
    expect(calls).toBe(1);
  });
});
