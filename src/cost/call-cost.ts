import type { Prices } from '../config/prices.js';
import type { CallCost, TokenUsage } from '../model/types.js';

/** US dollars for a usage at an endpoint's prices (per million tokens); cached prompt tokens at the cached price. */
export function computedCost(
  usage: Pick<TokenUsage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens'>,
  prices: Prices,
): CallCost {
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const usd =
    ((usage.promptTokens - cached) * prices.input +
      cached * (prices.cachedInput ?? prices.input) +
      usage.completionTokens * prices.output) /
    1_000_000;
  return { usd, source: 'computed' };
}

/**
 * What a call cost: the provider's own figure when it reported one, else computed from the usage at the endpoint's
 * prices; null when neither is known (no usage, or no prices): never a made-up 0.
 */
export function costOfUsage(
  usage: TokenUsage | null | undefined,
  prices: Prices | undefined,
): CallCost | null {
  if (!usage) return null;
  if (usage.cost) return usage.cost;
  return prices ? computedCost(usage, prices) : null;
}

/** The usage with its cost filled in (see `costOfUsage`); unchanged when no cost is known. */
export function pricedUsage(usage: TokenUsage, prices: Prices | undefined): TokenUsage {
  const cost = costOfUsage(usage, prices);
  return cost === null || usage.cost ? usage : { ...usage, cost };
}

/**
 * The cost of several calls together (a judgment's attempts, an optimizer proposal's): their sum, `computed` when
 * any part was; undefined when a call with usage has no cost (a partial sum would understate it). Calls without
 * usage were not billed and are left out.
 */
export function sumCallCosts(
  usages: ReadonlyArray<{ cost?: CallCost } | null | undefined>,
): CallCost | undefined {
  const billed = usages.filter((usage) => usage !== null && usage !== undefined);
  if (billed.length === 0 || billed.some((usage) => !usage.cost)) return undefined;
  return {
    usd: billed.reduce((sum, usage) => sum + usage.cost!.usd, 0),
    source: billed.some((usage) => usage.cost!.source === 'computed') ? 'computed' : 'reported',
  };
}
