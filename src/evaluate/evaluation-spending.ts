import { ROLES } from '../config/endpoint.js';
import type { Prices, SpendStage } from '../config/prices.js';
import type { RunConfig } from '../config/run-config.js';
import { BudgetGuard, type SpendScope } from '../cost/budget-guard.js';
import { episodeCost } from '../cost/episode-cost.js';
import { meteredModel } from '../cost/metered-model.js';
import { spentFigures, type SpendingSummary } from '../cost/spending-summary.js';
import type { EpisodeBackend } from '../queue/episode-backend.js';
import type { Run } from '../store/run-store.js';
import type { EvaluatedModel } from './evaluation-plan.js';
import type { ServedEvaluation, ServedJudge } from './serve-evaluation.js';

/**
 * An evaluation's spending and budgets (`budgets.cost`, `budgets.tokens`): every judge call and every episode is
 * added to the run's spending journal as it ends, and each piece of work (an episode, a judgment) is checked against
 * the budgets before it starts (`beforeWork`). The evaluation's spending goes into its summary.
 */
export class EvaluationSpending {
  private constructor(
    readonly guard: BudgetGuard,
    private readonly name: string,
    private readonly stage: SpendStage,
  ) {}

  /** `stage`: what its spending is journaled and budgeted under (`mass students` judges and evaluates as `students`). */
  static async open(
    run: Run<unknown>,
    config: RunConfig,
    name: string,
    stage: SpendStage = 'evaluation',
  ): Promise<EvaluationSpending> {
    return new EvaluationSpending(await BudgetGuard.open(run.directory, config.budgets), name, stage);
  }

  private scope(role: 'executor' | 'judge'): SpendScope {
    return { stage: this.stage, label: this.name, role };
  }

  /**
   * Before a piece of work starts: an episode is the executor's, a judgment the judge's; `BudgetExhaustedError`
   * (exit 3) when a budget over it is spent. Work already under way finishes.
   */
  beforeWork(kind: string): void {
    if (kind === 'episode') this.guard.check(this.scope('executor'));
    else if (kind === 'judgment') this.guard.check(this.scope('judge'));
  }

  /** The served evaluation with each judge's billed calls added to the spending. */
  served(served: ServedEvaluation): ServedEvaluation {
    served.judges = served.judges.map((judge) => this.judge(judge));
    for (const [name, judge] of served.selfJudges) served.selfJudges.set(name, this.judge(judge));
    return served;
  }

  private judge(judge: ServedJudge): ServedJudge {
    const scope = this.scope('judge');
    return {
      ...judge,
      model: meteredModel(judge.model, {
        onUsage: (usage) => this.guard.recordCall(scope, judge.modelName, usage),
      }),
    };
  }

  /**
   * The back-end with each episode's spending added once it has run (its team's tokens, and their cost: reported in
   * its record, else at its model's prices), under the episode's folder, so an episode is counted once.
   */
  episodes(backend: EpisodeBackend, models: readonly EvaluatedModel[]): EpisodeBackend {
    const prices = new Map<string, Prices | undefined>(
      models.map((model) => [model.servedAs, model.endpoint.prices]),
    );
    const scope = this.scope('executor');
    return {
      kind: backend.kind,
      close: () => backend.close(),
      run: async (request) => {
        const result = await backend.run(request);
        const { record } = result;
        await this.guard.recordOnce({
          ...scope,
          key: `episode/${request.stepKey}`,
          model: record.model,
          calls: record.modelCalls,
          promptTokens: record.usage.total.promptTokens,
          completionTokens: record.usage.total.completionTokens,
          cost: episodeCost(record, prices.get(record.model)),
        });
        return result;
      },
    };
  }

  /** The evaluation's spending so far, from the run's journal: per role and in all. */
  summary(): SpendingSummary {
    const label = { stage: this.stage, label: this.name };
    const roles: SpendingSummary['roles'] = {};
    for (const role of ROLES) {
      const spent = this.guard.spent({ ...label, role });
      if (spent.calls > 0) roles[role] = spentFigures(spent);
    }
    return { total: spentFigures(this.guard.spent(label)), roles };
  }
}
