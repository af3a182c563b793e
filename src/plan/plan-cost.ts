import type { Figure } from './plan-types.js';
import type { RoleTokens } from './role-tokens.js';

/** An endpoint's prices in US dollars per million tokens, as the configuration gives them (`prices`). */
interface PriceTable {
  input: number;
  cachedInput?: number;
  output: number;
}

export interface PlanCost {
  /** Each role on a priced endpoint, its tokens at that endpoint's prices. */
  endpoints: Array<{ role: string; usd: Figure }>;
  totalUsd: number;
  /** Roles on endpoints without prices, or whose input tokens nothing bounds. */
  unpriced: string[];
}

/**
 * What the plan's tokens cost at each priced endpoint: input at the input price (a plan knows no cache hits, so none
 * is counted at the cached price: the most it costs), output at the output price. A role whose input tokens are not
 * known (an episode's, without `--like`) is priced on its output alone and says so.
 */
export function planCost(roles: readonly RoleTokens[]): PlanCost {
  const endpoints: PlanCost['endpoints'] = [];
  const unpriced: string[] = [];
  for (const role of roles) {
    const prices = (role.endpoint as { prices?: PriceTable }).prices;
    if (!prices || role.units === 0) {
      if (role.units > 0) unpriced.push(role.role);
      continue;
    }
    const input = role.promptTokens?.value ?? 0;
    const usd = (input * prices.input + role.completionTokens.value * prices.output) / 1_000_000;
    const bases = [...new Set([role.promptTokens?.basis, role.completionTokens.basis].filter(Boolean))];
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
