import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';

/**
 * The default retry of a model call whose server fails before any byte of the answer (the episode proxy's, and every
 * retrying client's): attempts in all, the call's total time, the first and the longest wait, and how long a stream
 * may go without its response head. They ride out a model server restart of two to three minutes.
 */
export const DEFAULT_CALL_RETRY = {
  maxAttempts: 40,
  maxTotalMs: 180_000,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  responseHeadTimeoutMs: 300_000,
} as const;

/**
 * The run configuration's `faultTolerance` section: how long a model call is retried while its server fails (the
 * episode's proxy, before the harness sees a byte), and how long a search waits for a server that stays down before
 * it stops (exit 3; the same command resumes). The defaults ride out a vLLM restart of two to three minutes.
 */
export const FaultTolerance = z
  .object({
    callAttempts: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_CALL_RETRY.maxAttempts)
      .describe('attempts per model call, the first included; 1: no retries'),
    callSeconds: durationSchema({ unit: 's' })
      .default(DEFAULT_CALL_RETRY.maxTotalMs / 1000)
      .describe('no new attempt once a call has taken this long, waits included'),
    initialDelayMs: durationSchema({ unit: 'ms' }).default(DEFAULT_CALL_RETRY.initialDelayMs),
    maxDelayMs: durationSchema({ unit: 'ms' }).default(DEFAULT_CALL_RETRY.maxDelayMs),
    responseHeadTimeoutSeconds: durationSchema({ unit: 's' })
      .default(DEFAULT_CALL_RETRY.responseHeadTimeoutMs / 1000)
      .describe('a streamed call with no response head by then is retried'),
    outageSeconds: durationSchema({ unit: 's' })
      .default(900)
      .describe('how long a search waits for a model server that stays down, then stops with exit 3'),
    probeSeconds: durationSchema({ unit: 's' })
      .default(5)
      .describe('how often a server that is down is asked whether it is back'),
  })
  .strict();
export type FaultTolerance = z.output<typeof FaultTolerance>;

/** The section with every default, for a configuration that has none. */
export function faultTolerance(config: { faultTolerance?: FaultTolerance }): FaultTolerance {
  return config.faultTolerance ?? FaultTolerance.parse({});
}

/** How long work waits for a model server that stays down, and how often it asks whether it is back. */
export interface OutageSettings {
  budgetSeconds: number;
  probeSeconds: number;
}

/** The outage settings of a configuration (the section's defaults when it has none). */
export function outageSettings(config: { faultTolerance?: FaultTolerance }): OutageSettings {
  const { outageSeconds, probeSeconds } = faultTolerance(config);
  return { budgetSeconds: outageSeconds, probeSeconds };
}
