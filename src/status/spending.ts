import { join } from 'node:path';

import { parse as parseYaml } from 'yaml';

import { CostLimits, TokenLimits, type SpendLimits } from '../config/prices.js';
import { describeCost, formatUsd } from '../cost/cost-total.js';
import { SpendLedger, type SpendFilter } from '../cost/spend-ledger.js';
import { readSpending, SPENDING_FILE } from '../cost/spend-journal.js';
import { spentFigures, type SpentFigures } from '../cost/spending-summary.js';
import { runFiles } from '../store/run-paths.js';
import { readOptional } from './optional-file.js';

/** One budget of the run's configuration beside what its scope spent (`usd` or tokens). */
export interface BudgetStatus {
  /** The configuration field, e.g. `budgets.cost.stages.search`. */
  budget: string;
  unit: 'usd' | 'tokens';
  limit: number;
  spent: number;
  spentFigures: SpentFigures;
}

/** What one stage's generation or evaluation (`label`) spent on one role. */
export interface SpendGroupStatus {
  stage: string;
  /** The generation (`L0`) or the evaluation's name. */
  label: string;
  role: string;
  spentFigures: SpentFigures;
}

/** What the run's spending journal (`spending.jsonl`) holds: in all, per stage and role, and against each budget. */
export interface SpendingStatus {
  total: SpentFigures;
  groups: SpendGroupStatus[];
  budgets: BudgetStatus[];
}

/** The run's spending and budgets; null when the run has no spending journal. */
export async function readSpendingStatus(directory: string): Promise<SpendingStatus | null> {
  const rows = await readSpending(join(directory, SPENDING_FILE));
  const limits = await readBudgets(directory);
  if (rows.length === 0 && !limits.cost && !limits.tokens) return null;
  const ledger = new SpendLedger(rows);
  const budgets: BudgetStatus[] = [];
  for (const unit of ['usd', 'tokens'] as const) {
    const spend = unit === 'usd' ? limits.cost : limits.tokens;
    if (!spend) continue;
    const field = unit === 'usd' ? 'budgets.cost' : 'budgets.tokens';
    const scopes: Array<[string, number | undefined, SpendFilter]> = [[`${field}.run`, spend.run, {}]];
    for (const [role, limit] of Object.entries(spend.roles ?? {}))
      scopes.push([`${field}.roles.${role}`, limit, { role: role as SpendFilter['role'] }]);
    for (const [stage, limit] of Object.entries(spend.stages ?? {}))
      scopes.push([`${field}.stages.${stage}`, limit, { stage: stage as SpendFilter['stage'] }]);
    for (const [budget, limit, filter] of scopes) {
      if (limit === undefined) continue;
      const spent = ledger.spent(filter);
      budgets.push({
        budget,
        unit,
        limit,
        spent: unit === 'usd' ? spent.cost.usd : spent.tokens,
        spentFigures: spentFigures(spent),
      });
    }
  }
  const groups = ledger.groups().map(({ stage, label, role, spent }) => ({
    stage,
    label,
    role,
    spentFigures: spentFigures(spent),
  }));
  return { total: spentFigures(ledger.spent()), groups, budgets };
}

/** The budgets of the run's `config.yaml`; none when it is missing or they do not parse (status never fails on them). */
async function readBudgets(directory: string): Promise<{ cost?: SpendLimits; tokens?: SpendLimits }> {
  const text = await readOptional(join(directory, runFiles.config));
  if (text === null || text === undefined) return {};
  let budgets: unknown;
  try {
    budgets = (parseYaml(text) as { budgets?: unknown } | null)?.budgets;
  } catch {
    return {};
  }
  const { cost, tokens } = (budgets ?? {}) as { cost?: unknown; tokens?: unknown };
  const parsedCost = CostLimits.safeParse(cost);
  const parsedTokens = TokenLimits.safeParse(tokens);
  return {
    ...(parsedCost.success && parsedCost.data ? { cost: parsedCost.data } : {}),
    ...(parsedTokens.success && parsedTokens.data ? { tokens: parsedTokens.data } : {}),
  };
}

/** Input plus output tokens. */
export function spentTokens(figures: SpentFigures): number {
  return figures.promptTokens + figures.completionTokens;
}

/** A budget's spending beside its limit: `$x (…) / $limit` or `n tokens / limit`. */
export function describeBudgetSpent(budget: BudgetStatus): string {
  return budget.unit === 'usd'
    ? `${describeCost(budget.spentFigures.cost)} / ${formatUsd(budget.limit)}`
    : `${budget.spent} tokens / ${budget.limit}`;
}

/** The note a spent budget carries. */
export const SPENT_BUDGET_NOTE = 'spent: work past it is not started';

/** `spent: $x (reported y, computed z) / budget` per budget, per stage and role, and the run's whole spending. */
export function spendingLines(spending: SpendingStatus | null | undefined): string[] {
  if (!spending) return [];
  const lines = [
    '',
    'spending',
    `  spent: ${describeCost(spending.total.cost)}, ${spentTokens(spending.total)} tokens in ${spending.total.calls} calls`,
  ];
  for (const group of spending.groups) {
    const figures = group.spentFigures;
    lines.push(
      `    ${group.stage} ${group.label} ${group.role}: ${describeCost(figures.cost)}, ${spentTokens(figures)} tokens in ${figures.calls} calls`,
    );
  }
  for (const budget of spending.budgets) {
    lines.push(
      `  ${budget.budget}: spent ${describeBudgetSpent(budget)}${budget.spent >= budget.limit ? ` (${SPENT_BUDGET_NOTE})` : ''}`,
    );
  }
  return lines;
}
