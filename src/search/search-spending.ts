import type { Prices } from '../config/prices.js';
import type { BudgetLimits } from '../cost/budget-guard.js';
import { StageSpending } from '../cost/stage-spending.js';
import type { Run } from '../store/run-store.js';

/**
 * A search's spending and budgets: the stage `search` under the generation's label (see `StageSpending`). Every judge
 * and optimizer call, every episode once it has run, and each episode, judgment and optimizer proposal is checked
 * against the budgets before it starts.
 */
export type SearchSpending = StageSpending;

export const SearchSpending = {
  open(
    run: Run<unknown>,
    generation: string,
    budgets: BudgetLimits = {},
    executorPrices?: Prices,
  ): Promise<SearchSpending> {
    return StageSpending.open(run.directory, { stage: 'search', label: generation }, budgets, executorPrices);
  },
};
