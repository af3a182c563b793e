import { ROLES } from '../config/endpoint.js';
import type { Prices, SpendStage } from '../config/prices.js';
import type { RunConfig } from '../config/run-config.js';
import type { BudgetGuard } from '../cost/budget-guard.js';
import { StageSpending } from '../cost/stage-spending.js';
import { spentFigures, type SpendingSummary } from '../cost/spending-summary.js';
import type { EpisodeBackend } from '../queue/episode-backend.js';
import type { Run } from '../store/run-store.js';
import type { EvaluatedModel } from './evaluation-plan.js';
import type { ServedEvaluation } from './serve-evaluation.js';

/**
 * An evaluation's spending and budgets (`budgets.cost`, `budgets.tokens`), as a stage's (`StageSpending`) under the
 * evaluation's name: every judge call and every episode is added to the run's spending journal as it ends, and each
 * piece of work (an episode, a judgment) is checked against the budgets before it starts (`beforeWork`). The
 * evaluation's spending goes into its summary.
 */
export class EvaluationSpending {
  private constructor(
    private readonly spending: StageSpending,
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
    const spending = await StageSpending.open(run.directory, { stage, label: name }, config.budgets);
    return new EvaluationSpending(spending, name, stage);
  }

  get guard(): BudgetGuard {
    return this.spending.guard;
  }

  /**
   * Before a piece of work starts: an episode is the executor's, a judgment the judge's; `BudgetExhaustedError`
   * (exit 3) when a budget over it is spent. Work already under way finishes.
   */
  beforeWork(kind: string): void {
    if (kind === 'episode') this.spending.beforeWork('executor');
    else if (kind === 'judgment') this.spending.beforeWork('judge');
  }

  /** The served evaluation with each judge's billed calls added to the spending. */
  served(served: ServedEvaluation): ServedEvaluation {
    served.judges = served.judges.map((judge) => this.spending.metered('judge', judge));
    for (const [name, judge] of served.selfJudges) {
      served.selfJudges.set(name, this.spending.metered('judge', judge));
    }
    return served;
  }

  /** The back-end with each episode's spending added once it has run, at its model's prices. */
  episodes(backend: EpisodeBackend, models: readonly EvaluatedModel[]): EpisodeBackend {
    const prices = new Map<string, Prices | undefined>(
      models.map((model) => [model.servedAs, model.endpoint.prices]),
    );
    return {
      kind: backend.kind,
      close: () => backend.close(),
      run: async (request) => {
        const result = await backend.run(request);
        await this.spending.episode(request.stepKey, result.record, (model) => prices.get(model));
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
