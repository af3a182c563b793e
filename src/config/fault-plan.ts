import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';

/**
 * Faults a model server injects on purpose, so that anyone can see what a flaky server costs a run and that the loop
 * rides it out: the toy model and the scripted server answer a share of chat requests with a fault in place of the
 * answer. All kinds but `drop_mid_stream` happen before the first byte of the answer; `hang` is a server that stalls
 * (for `hangSeconds`) and then drops the connection; `reset` drops it at once.
 */
export const FAULT_KINDS = ['429', '500', '502', '503', '504', 'reset', 'hang', 'drop_mid_stream'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The kinds that fail before any byte of the answer is sent: a proxy can retry them unseen. */
export const BEFORE_FIRST_BYTE_FAULTS: readonly FaultKind[] = FAULT_KINDS.filter(
  (kind) => kind !== 'drop_mid_stream',
);

/** YAML gives numbers for the statuses (`kinds: [503, 429, reset]`); both spellings are accepted. */
const FaultKindField = z.preprocess(
  (value) => (typeof value === 'number' ? String(value) : value),
  z.enum(FAULT_KINDS),
);

export const FaultPlan = z
  .object({
    rate: z.number().min(0).max(1).describe('the share of chat requests answered with a fault'),
    kinds: z
      .array(FaultKindField)
      .min(1)
      .default([...BEFORE_FIRST_BYTE_FAULTS])
      .describe('429, 500, 502, 503, 504, reset, hang, drop_mid_stream; drawn evenly'),
    seed: z.number().int().nonnegative().default(1).describe('which requests fail, and how'),
    hangSeconds: durationSchema({ unit: 's' })
      .default(2)
      .describe('how long a hang stalls before the connection drops'),
    retryAfterSeconds: durationSchema({ unit: 's', zero: true })
      .int()
      .default(1)
      .describe('the Retry-After a 429 carries'),
  })
  .strict();
export type FaultPlan = z.infer<typeof FaultPlan>;
export type FaultPlanInput = z.input<typeof FaultPlan>;
