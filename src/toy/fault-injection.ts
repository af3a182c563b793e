import { seededRandom, type Random } from '../ranking/seeded-random.js';
import { FaultPlan, type FaultKind, type FaultPlanInput } from '../config/fault-plan.js';
import { durationMs } from '../timer-duration.js';
import type { Step } from './steps.js';

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
        return { kind: 'drop', afterChunks: 0, delayMs: durationMs(this.plan.hangSeconds, 's') };
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
