import { z } from 'zod';

import { ROLES } from '../config/endpoint.js';
import { CostTotal } from './cost-total.js';
import type { Spent } from './spend-ledger.js';

/** What one role (or everything) spent: model calls, tokens and cost. */
export const SpentFigures = z.object({
  calls: z.number().int().nonnegative(),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  cost: CostTotal,
});
export type SpentFigures = z.infer<typeof SpentFigures>;

/** A stage's spending in a summary (an evaluation's `summary.json`): per role and in all. */
export const SpendingSummary = z.object({
  total: SpentFigures,
  roles: z.partialRecord(z.enum(ROLES), SpentFigures),
});
export type SpendingSummary = z.infer<typeof SpendingSummary>;

export function spentFigures(spent: Spent): SpentFigures {
  return {
    calls: spent.calls,
    promptTokens: spent.promptTokens,
    completionTokens: spent.completionTokens,
    cost: { ...spent.cost },
  };
}
