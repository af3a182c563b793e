import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import type { Role } from '../config/endpoint.js';
import type { SpendLimits, SpendStage } from '../config/prices.js';
import { UserError } from '../errors.js';
import type { TokenUsage } from '../model/types.js';
import {
  announceBudgetExhausted,
  BudgetExhaustedError,
  type BudgetExhaustedEvent,
} from './budget-exhausted.js';
import { SpendLedger, type Spent, type SpendFilter } from './spend-ledger.js';
import { appendSpending, readSpending, SPENDING_FILE, type SpendRow } from './spend-journal.js';

/** The spending limits of a run: `budgets.cost` (US dollars) and `budgets.tokens`. */
export interface BudgetLimits {
  cost?: SpendLimits;
  tokens?: SpendLimits;
}

/** Where spending happens: the stage, its generation or evaluation, and the role. */
export interface SpendScope {
  stage: SpendStage;
  label: string;
  role: Role;
}

/**
 * Keeps a run's spending and its budgets. Spending is summed from the run's journal (`spending.jsonl`), read once
 * when the guard opens, so a command run again counts what it spent before; each billed call and finished episode is
 * added to it as it happens. `check` is asked before a piece of work starts (an episode, a judgment with its repairs
 * and orders, an optimizer proposal): work that would start with a budget already spent is refused, and work already
 * started finishes, so a budget may be passed by what was in flight.
 */
export class BudgetGuard {
  private readonly announced = new Set<string>();

  private constructor(
    private readonly file: string | null,
    private readonly limits: BudgetLimits,
    readonly ledger: SpendLedger,
  ) {}

  /** The guard of the run in `runDirectory`, its spending read from the journal there. */
  static async open(runDirectory: string, limits: BudgetLimits): Promise<BudgetGuard> {
    const file = join(runDirectory, SPENDING_FILE);
    return new BudgetGuard(file, limits, new SpendLedger(await readSpending(file)));
  }

  /** A guard that keeps its spending in memory only (a command outside a run). */
  static inMemory(limits: BudgetLimits = {}): BudgetGuard {
    return new BudgetGuard(null, limits, new SpendLedger());
  }

  spent(filter: SpendFilter = {}): Spent {
    return this.ledger.spent(filter);
  }

  /**
   * Throws `BudgetExhaustedError` (exit 3) when a budget that covers the scope is spent: the run's, the role's or
   * the stage's, in US dollars or tokens; listeners of `onBudgetExhausted` hear of it first. A cost budget whose
   * scope has calls of unknown cost (an endpoint without prices whose provider reports none) cannot be kept: that is
   * refused as the user's to fix, rather than a budget that would never stop anything.
   */
  check(scope: SpendScope): void {
    for (const unit of ['usd', 'tokens'] as const) {
      const limits = unit === 'usd' ? this.limits.cost : this.limits.tokens;
      if (!limits) continue;
      const field = unit === 'usd' ? 'budgets.cost' : 'budgets.tokens';
      const scopes: Array<[string, number | undefined, SpendFilter]> = [
        [`${field}.run`, limits.run, {}],
        [`${field}.roles.${scope.role}`, limits.roles?.[scope.role], { role: scope.role }],
        [
          `${field}.stages.${scope.stage}`,
          (limits.stages as Partial<Record<SpendStage, number>> | undefined)?.[scope.stage],
          { stage: scope.stage },
        ],
      ];
      for (const [budget, limit, filter] of scopes) {
        if (limit === undefined) continue;
        const spent = this.ledger.spent(filter);
        if (unit === 'usd' && spent.cost.unpricedCalls > 0) {
          throw new UserError(
            `${budget} cannot be kept: ${spent.cost.unpricedCalls} billed calls in its scope have no known cost ` +
              '(the provider reported none and the endpoint has no prices): give the endpoint prices ' +
              "(roles.<role>.prices, or the evaluation judge's endpoint.prices: { input, output } per million tokens)",
          );
        }
        const used = unit === 'usd' ? spent.cost.usd : spent.tokens;
        if (used >= limit)
          this.exhausted({
            kind: 'budget-exhausted',
            budget,
            unit,
            limit,
            spent: used,
            ...scope,
            at: new Date().toISOString(),
          });
      }
    }
  }

  /** Adds what one billed call spent (no usage: not billed, nothing added). */
  async recordCall(scope: SpendScope, model: string, usage: TokenUsage | null): Promise<void> {
    if (!usage) return;
    await this.record({
      ...scope,
      key: `call/${randomUUID()}`,
      model,
      calls: usage.billedAttempts ?? 1,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cost: usage.cost ?? null,
    });
  }

  /** Adds what a finished piece of work spent under its own key; one already counted under that key is not added again. */
  async recordOnce(row: Omit<SpendRow, 'schemaVersion' | 'kind' | 'at'>): Promise<void> {
    if (this.ledger.has(row.key)) return;
    await this.record(row);
  }

  private async record(row: Omit<SpendRow, 'schemaVersion' | 'kind' | 'at'>): Promise<void> {
    const full: SpendRow = { schemaVersion: 1, kind: 'spend', at: new Date().toISOString(), ...row };
    this.ledger.add(full);
    if (this.file) await appendSpending(this.file, full);
  }

  private exhausted(event: BudgetExhaustedEvent): never {
    if (!this.announced.has(event.budget)) {
      this.announced.add(event.budget);
      announceBudgetExhausted(event);
    }
    throw new BudgetExhaustedError(event);
  }
}
