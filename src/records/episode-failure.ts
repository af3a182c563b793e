import { z } from 'zod';

export const FailureKind = z.enum([
  'timeout',
  'api_error',
  'harness_crash',
  'output_budget',
  'sandbox_violation',
  /** The sandbox stopped the run at its memory, process or disk limit (the sandbox's `limitExceeded` says which). */
  'resource_limit',
  /** The harness reported success, but not on the orchestrator's last response the proxy recorded. */
  'unconfirmed_result',
]);
export type FailureKind = z.infer<typeof FailureKind>;

/**
 * Why a model call failed, for `api_error`: the server stayed unavailable past the proxy's retries (an outage: the
 * episode says nothing about its design), the stream was cut after part of it reached the harness and could not be
 * resumed, or the server refused the request (a 4xx: the request itself was wrong, e.g. too long).
 */
export const ApiErrorCause = z.enum(['server_unavailable', 'stream_cut', 'request_refused']);
export type ApiErrorCause = z.infer<typeof ApiErrorCause>;

export const EpisodeFailure = z.object({
  kind: FailureKind,
  /** Set for `api_error` (absent in older records). */
  cause: ApiErrorCause.optional(),
  detail: z.string(),
  lastToolCalls: z.array(
    z.object({ name: z.string(), input: z.string(), parentToolUseId: z.string().nullable() }),
  ),
});
export type EpisodeFailure = z.infer<typeof EpisodeFailure>;
