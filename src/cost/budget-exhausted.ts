import type { Role } from '../config/endpoint.js';
import type { SpendStage } from '../config/prices.js';
import { SystemError } from '../errors.js';
import { formatUsd } from './cost-total.js';

/**
 * A budget ran out: the event a notification carries (`onBudgetExhausted`), and what the error that stops the
 * command says. `budget` names the configuration field (`budgets.cost.stages.evaluation`).
 */
export interface BudgetExhaustedEvent {
  kind: 'budget-exhausted';
  budget: string;
  unit: 'usd' | 'tokens';
  limit: number;
  /** What the budget's scope had spent when the next piece of work was refused. */
  spent: number;
  /** The work that was not started. */
  stage: SpendStage;
  label: string;
  role: Role;
  at: string;
}

/** Stops the command (exit code 3, as every `SystemError`): raise the budget and run it again to go on. */
export class BudgetExhaustedError extends SystemError {
  constructor(readonly event: BudgetExhaustedEvent) {
    super(describeBudgetExhausted(event));
  }
}

export function describeBudgetExhausted(event: BudgetExhaustedEvent): string {
  const amount = (value: number) =>
    event.unit === 'usd' ? formatUsd(value) : `${Math.round(value).toLocaleString('en-US')} tokens`;
  return (
    `${event.budget} ran out: ${amount(event.spent)} spent of ${amount(event.limit)}; ` +
    `the ${event.role}'s next work in ${event.stage} ${event.label} was not started. ` +
    `Nothing finished is lost: raise ${event.budget} in the configuration and run the command again to go on.`
  );
}

type Listener = (event: BudgetExhaustedEvent) => void;
const listeners = new Set<Listener>();

/**
 * Calls `listener` with each budget that runs out in this process (once per budget), before the command stops; a
 * listener that throws is ignored. Returns the function that unsubscribes it.
 */
export function onBudgetExhausted(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Tells every listener (see `onBudgetExhausted`). */
export function announceBudgetExhausted(event: BudgetExhaustedEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A notification must never change what the command does.
    }
  }
}
