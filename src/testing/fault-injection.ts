import { z } from 'zod';

import { seededRandom, type Random } from '../ranking/seeded-random.js';
import type { Step } from './steps.js';

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
    hangSeconds: z
      .number()
      .positive()
      .default(2)
      .describe('how long a hang stalls before the connection drops'),
    retryAfterSeconds: z.number().int().min(0).default(1).describe('the Retry-After a 429 carries'),
  })
  .strict();
export type FaultPlan = z.infer<typeof FaultPlan>;
export type FaultPlanInput = z.input<typeof FaultPlan>;

/** What the injector decided for one request: nothing, a fault before the answer, or the answer cut mid-way. */
export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'before-answer'; fault: FaultKind; step: Step }
  | { kind: 'cut-answer'; fault: 'drop_mid_stream' };

/**
 * Draws, request by request in arrival order, whether a fault is injected and which: the same plan and the same
 * order of requests give the same faults. Counts what it injected, for tests and benches.
 */
export class FaultInjector {
  readonly plan: FaultPlan;
  readonly injected = new Map<FaultKind, number>();
  private readonly random: Random;

  constructor(plan: FaultPlanInput) {
    this.plan = FaultPlan.parse(plan);
    this.random = seededRandom(this.plan.seed);
  }

  /** Faults injected so far, all kinds together. */
  get total(): number {
    let sum = 0;
    for (const count of this.injected.values()) sum += count;
    return sum;
  }

  next(): FaultDecision {
    const draw = this.random();
    const pick = this.random();
    if (draw >= this.plan.rate) return { kind: 'none' };
    const fault =
      this.plan.kinds[Math.min(this.plan.kinds.length - 1, Math.floor(pick * this.plan.kinds.length))]!;
    this.injected.set(fault, (this.injected.get(fault) ?? 0) + 1);
    if (fault === 'drop_mid_stream') return { kind: 'cut-answer', fault };
    return { kind: 'before-answer', fault, step: this.stepFor(fault) };
  }

  private stepFor(fault: Exclude<FaultKind, 'drop_mid_stream'>): Step {
    const message = `injected fault (${fault})`;
    switch (fault) {
      case 'reset':
        return { kind: 'drop', afterChunks: 0 };
      case 'hang':
        return { kind: 'drop', afterChunks: 0, delayMs: this.plan.hangSeconds * 1000 };
      case '429':
        return { kind: 'status', status: 429, message, retryAfterSeconds: this.plan.retryAfterSeconds };
      default:
        return { kind: 'status', status: Number(fault), message };
    }
  }
}

/**
 * The answer `step` cut mid-way, as a stream cut by a dying server: the first half of its chunks, then the
 * connection dropped. Only a streamed reply can be cut so; any other step is cut before its first byte.
 */
export function cutMidStream(step: Step): Step {
  if (step.kind !== 'reply') return { kind: 'drop', afterChunks: 0 };
  return { ...step, cutAfterChunks: 'half' };
}
