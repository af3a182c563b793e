import type { Prices } from '../config/prices.js';
import { BudgetGuard, type BudgetLimits, type SpendScope } from '../cost/budget-guard.js';
import { episodeCost, type EpisodeSpendFacts } from '../cost/episode-cost.js';
import { meteredModel } from '../cost/metered-model.js';
import type { RoleModel } from '../model/role-endpoint.js';
import type { Run } from '../store/run-store.js';

/** The roles whose work a search checks against the budgets before it starts. */
export type SearchRole = 'executor' | 'judge' | 'optimizer';

/**
 * A search's spending and budgets (`budgets.cost`, `budgets.tokens`), under the stage `search` and the generation's
 * label: every judge and optimizer call is added to the run's spending journal as it ends, every episode once it has
 * run (under its step key, so an episode is counted once), and each piece of work (an episode, a judgment, an
 * optimizer proposal) is checked against the budgets before it starts (`beforeWork`): one that would start with a
 * budget spent is not started, and `BudgetExhaustedError` (exit 3) stops the search.
 */
export class SearchSpending {
  private constructor(
    readonly guard: BudgetGuard,
    private readonly generation: string,
    private readonly executorPrices: Prices | undefined,
  ) {}

  static async open(
    run: Run<unknown>,
    generation: string,
    budgets: BudgetLimits = {},
    executorPrices?: Prices,
  ): Promise<SearchSpending> {
    return new SearchSpending(await BudgetGuard.open(run.directory, budgets), generation, executorPrices);
  }

  private scope(role: SearchRole): SpendScope {
    return { stage: 'search', label: this.generation, role };
  }

  /** Before an episode (the executor's), a judgment (the judge's) or a proposal (the optimizer's) starts. */
  beforeWork(role: SearchRole): void {
    this.guard.check(this.scope(role));
  }

  /** The judge or optimizer with each billed call added to the spending. */
  metered(role: 'judge' | 'optimizer', roleModel: RoleModel): RoleModel {
    const scope = this.scope(role);
    return {
      ...roleModel,
      model: meteredModel(roleModel.model, {
        onUsage: (usage) => this.guard.recordCall(scope, roleModel.modelName, usage),
      }),
    };
  }

  /** What a finished episode's team spent (its record's tokens and cost), once under its step key. */
  async episode(
    stepKey: string,
    record: EpisodeSpendFacts & { model: string; modelCalls: number },
  ): Promise<void> {
    await this.guard.recordOnce({
      ...this.scope('executor'),
      key: `episode/${stepKey}`,
      model: record.model,
      calls: record.modelCalls,
      promptTokens: record.usage.total.promptTokens,
      completionTokens: record.usage.total.completionTokens,
      cost: episodeCost(record, this.executorPrices),
    });
  }
}
