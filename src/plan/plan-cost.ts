import { computedCost } from '../cost/call-cost.js';
import type { Figure } from './plan-types.js';
import type { RoleTokens } from './role-tokens.js';

export interface PlanCost {
  /** Each role on a priced endpoint (`prices`), its planned tokens at that endpoint's prices. */
  endpoints: Array<{ role: string; usd: Figure }>;
  totalUsd: number;
  /** Roles with work on endpoints without prices. */
  unpriced: string[];
}

/**
 * What the plan's tokens cost at each priced endpoint, as the cost accounting computes a call's (`computedCost`): a
 * plan knows no cache hits, so every input token is at the input price (the most it costs). A role whose input tokens
 * are not known (an episode's, without `--like`) is priced on its output alone, and says so.
 */
export function planCost(roles: readonly RoleTokens[]): PlanCost {
  const endpoints: PlanCost['endpoints'] = [];
  const unpriced: string[] = [];
  for (const role of roles) {
    if (role.units === 0) continue;
    const { prices } = role.endpoint;
    if (!prices) {
      unpriced.push(role.role);
      continue;
    }
    const { usd } = computedCost(
      {
        promptTokens: Math.round(role.promptTokens?.value ?? 0),
        completionTokens: Math.round(role.completionTokens.value),
      },
      prices,
    );
    const bases = [...new Set([role.promptTokens?.basis, role.completionTokens.basis])].filter(Boolean);
    endpoints.push({
      role: role.role,
      usd: {
        value: usd,
        basis: `${bases.join('; ')}${role.promptTokens ? '' : '; output only: input not known'}`,
      },
    });
  }
  return { endpoints, totalUsd: endpoints.reduce((sum, entry) => sum + entry.usd.value, 0), unpriced };
}
