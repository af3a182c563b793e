import { z } from 'zod';

import { Budgets } from '../config/loop-settings.js';
import { durationSchema } from '../timer-duration.js';
import type { UpstreamRetryPolicy } from './upstream-retry.js';

/**
 * How the recording proxy retries an upstream that fails before the client got a byte: each field left out keeps
 * `DEFAULT_UPSTREAM_RETRY`'s; `maxAttempts: 1` turns it off.
 */
export const UpstreamRetrySettings = z
  .object({
    maxAttempts: z.number().int().positive().optional(),
    maxTotalMs: durationSchema({ unit: 'ms', zero: true }).optional(),
    initialDelayMs: durationSchema({ unit: 'ms', zero: true }).optional(),
    maxDelayMs: durationSchema({ unit: 'ms', zero: true }).optional(),
    responseHeadTimeoutMs: durationSchema({ unit: 'ms' }).nullable().optional(),
  })
  .strict() satisfies z.ZodType<Partial<UpstreamRetryPolicy>>;

/**
 * What bounds the recording proxy's calls, as an episode specification carries them (`EpisodeSpec` takes these
 * fields as they are).
 */
export const ProxyLimits = z.object({
  /**
   * The most completion tokens (all models together) the proxy lets through (the configuration's
   * `budgets.episodeOutputBudget`). Once spent, chat requests get a 400 that says so, and `outputBudgetSpent` turns
   * true. Calls in flight when it runs out finish normally. Default: no budget.
   */
  outputBudget: Budgets.unwrap().shape.episodeOutputBudget,
  /** Retrying an upstream that fails before the client got a byte (default `DEFAULT_UPSTREAM_RETRY`). */
  retry: UpstreamRetrySettings.optional(),
});
export type ProxyLimits = z.infer<typeof ProxyLimits>;
