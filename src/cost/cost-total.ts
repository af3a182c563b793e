import { z } from 'zod';

import type { CallCost } from '../model/types.js';

/**
 * Costs summed over calls: the whole in US dollars, how much of it providers reported and how much was computed
 * from prices, and how many calls had no known cost (no usage, or an endpoint without prices), which the sum leaves
 * out rather than count as 0.
 */
export const CostTotal = z.object({
  usd: z.number().nonnegative(),
  reportedUsd: z.number().nonnegative(),
  computedUsd: z.number().nonnegative(),
  /** Calls whose cost is in `usd`. */
  pricedCalls: z.number().int().nonnegative(),
  /** Calls with no known cost, not in `usd`. */
  unpricedCalls: z.number().int().nonnegative(),
});
export type CostTotal = z.infer<typeof CostTotal>;

export function emptyCostTotal(): CostTotal {
  return { usd: 0, reportedUsd: 0, computedUsd: 0, pricedCalls: 0, unpricedCalls: 0 };
}

/** Adds one call's cost (null: unknown) to a total, in place; `calls` when the cost covers several calls. */
export function addCost(total: CostTotal, cost: CallCost | null | undefined, calls = 1): CostTotal {
  if (!cost) {
    total.unpricedCalls += calls;
    return total;
  }
  total.usd += cost.usd;
  if (cost.source === 'reported') total.reportedUsd += cost.usd;
  else total.computedUsd += cost.usd;
  total.pricedCalls += calls;
  return total;
}

/** The sum of totals, as a new total. */
export function sumCostTotals(totals: ReadonlyArray<CostTotal | null | undefined>): CostTotal {
  const sum = emptyCostTotal();
  for (const total of totals) {
    if (!total) continue;
    sum.usd += total.usd;
    sum.reportedUsd += total.reportedUsd;
    sum.computedUsd += total.computedUsd;
    sum.pricedCalls += total.pricedCalls;
    sum.unpricedCalls += total.unpricedCalls;
  }
  return sum;
}

/** Summed costs as one call cost: `reported` when providers reported all of it; null when no call had a cost. */
export function totalAsCallCost(total: CostTotal): CallCost | null {
  if (total.pricedCalls === 0) return null;
  return { usd: total.usd, source: total.computedUsd > 0 ? 'computed' : 'reported' };
}

/** `$1.2345 (reported $1.20, computed $0.0345; 3 calls without a cost)`, or `no cost known` when nothing was priced. */
export function describeCost(total: CostTotal): string {
  if (total.pricedCalls === 0) {
    return total.unpricedCalls > 0
      ? `no cost known (${total.unpricedCalls} calls without prices)`
      : 'nothing spent';
  }
  const parts: string[] = [];
  if (total.reportedUsd > 0 && total.computedUsd > 0) {
    parts.push(`reported ${formatUsd(total.reportedUsd)}, computed ${formatUsd(total.computedUsd)}`);
  } else parts.push(total.computedUsd > 0 ? 'computed' : 'reported');
  if (total.unpricedCalls > 0) parts.push(`${total.unpricedCalls} calls without a cost`);
  return `${formatUsd(total.usd)} (${parts.join('; ')})`;
}

/** Dollars with four significant decimals for small sums: `$0.0042`, `$12.35`. */
export function formatUsd(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}
