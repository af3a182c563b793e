export { computedCost, costOfUsage, pricedUsage, sumCallCosts } from './call-cost.js';
export {
  addCost,
  CostTotal,
  describeCost,
  emptyCostTotal,
  formatUsd,
  sumCostTotals,
  totalAsCallCost,
} from './cost-total.js';
export {
  announceBudgetExhausted,
  BudgetExhaustedError,
  describeBudgetExhausted,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from './budget-exhausted.js';
export { BudgetGuard, type BudgetLimits, type SpendScope } from './budget-guard.js';
export { meteredModel } from './metered-model.js';
export { StageSpending, type ExecutorPrices } from './stage-spending.js';
export { SpendLedger, type Spent, type SpendFilter } from './spend-ledger.js';
export { appendSpending, readSpending, SPENDING_FILE, SpendRow } from './spend-journal.js';
export { episodeCost, episodeSpendFacts, type EpisodeSpendFacts } from './episode-cost.js';
export { SpendingSummary, SpentFigures, spentFigures } from './spending-summary.js';
