import type { Role } from '../config/endpoint.js';
import type { Prices, SpendStage } from '../config/prices.js';
import type { RoleModel } from '../model/role-endpoint.js';
import { BudgetGuard, type BudgetLimits, type SpendScope } from './budget-guard.js';
import { episodeCost, type EpisodeSpendFacts } from './episode-cost.js';
import { meteredModel } from './metered-model.js';

/** The executor's prices, for a model its episodes ran (one endpoint's, or each served model's). */
export type ExecutorPrices = Prices | ((model: string) => Prices | undefined) | undefined;

/**
 * One stage's spending and budgets (`budgets.cost`, `budgets.tokens`) under its label (a generation, a benchmark, an
 * experiment): every metered judge and optimizer call is added to the run's spending journal as it ends, every
 * episode once it has run (under its step key, so an episode is counted once), and each piece of work (an episode, a
 * judgment, an optimizer proposal) is checked against the budgets before it starts (`beforeWork`): one that would
 * start with a budget spent is not started, and `BudgetExhaustedError` (exit 3) stops the command.
 */
export class StageSpending {
  private constructor(
    readonly guard: BudgetGuard,
    private readonly stage: SpendStage,
    private readonly label: string,
    private readonly executorPrices: ExecutorPrices,
  ) {}

  /** The stage's spending in the run at `runDirectory`, its journal read there. */
  static async open(
    runDirectory: string,
    where: { stage: SpendStage; label: string },
    budgets: BudgetLimits = {},
    executorPrices?: ExecutorPrices,
  ): Promise<StageSpending> {
    const guard = await BudgetGuard.open(runDirectory, budgets);
    return new StageSpending(guard, where.stage, where.label, executorPrices);
  }

  private scope(role: Role): SpendScope {
    return { stage: this.stage, label: this.label, role };
  }

  /** Before an episode (the executor's), a judgment (the judge's) or a proposal (the optimizer's) starts. */
  beforeWork(role: Role): void {
    this.guard.check(this.scope(role));
  }

  /** The judge or optimizer with each billed call added to the spending. */
  metered<Model extends RoleModel>(role: 'judge' | 'optimizer', roleModel: Model): Model {
    const scope = this.scope(role);
    return {
      ...roleModel,
      model: meteredModel(roleModel.model, {
        onUsage: (usage) => this.guard.recordCall(scope, roleModel.modelName, usage),
      }),
    };
  }

  /**
   * What a finished episode's team spent (its record's tokens and cost: reported in its record, else at its model's
   * prices), once under its step key.
   */
  async episode(
    stepKey: string,
    record: EpisodeSpendFacts & { model: string; modelCalls: number },
    executorPrices: ExecutorPrices = this.executorPrices,
  ): Promise<void> {
    const prices = typeof executorPrices === 'function' ? executorPrices(record.model) : executorPrices;
    await this.guard.recordOnce({
      ...this.scope('executor'),
      key: `episode/${stepKey}`,
      model: record.model,
      calls: record.modelCalls,
      promptTokens: record.usage.total.promptTokens,
      completionTokens: record.usage.total.completionTokens,
      cost: episodeCost(record, prices),
    });
  }
}
