import type { Prices } from '../config/prices.js';
import type { CallCost, TokenUsage } from '../model/types.js';
import { computedCost, sumCallCosts } from './call-cost.js';

/** What an episode's record says of its team's calls: their tokens and, when the provider reported it, their cost. */
export interface EpisodeSpendFacts {
  usage: { total: { promptTokens: number; completionTokens: number }; cachedPromptTokens?: number };
  cost?: CallCost;
}

/**
 * What an episode's team cost: the cost its record holds (reported by the provider for every call), else computed
 * from its tokens at the executor's prices; null when neither is known.
 */
export function episodeCost(record: EpisodeSpendFacts, prices: Prices | undefined): CallCost | null {
  if (record.cost) return record.cost;
  if (!prices) return null;
  const { promptTokens, completionTokens } = record.usage.total;
  return computedCost(
    { promptTokens, completionTokens, cachedPromptTokens: record.usage.cachedPromptTokens },
    prices,
  );
}

/**
 * What an episode's record states of its calls' spending, from the usage each call's answer reported (null: no
 * usage, not billed): the prompt tokens served from the provider's cache, and the cost when the provider reported one
 * for every billed call (a partial sum would understate it; the cost is then computed where it is summed).
 */
export function episodeSpendFacts(usages: ReadonlyArray<TokenUsage | null>): {
  cachedPromptTokens?: number;
  cost?: CallCost;
} {
  const billed = usages.filter((usage): usage is TokenUsage => usage !== null);
  const cached = billed.reduce((sum, usage) => sum + (usage.cachedPromptTokens ?? 0), 0);
  const reported = billed.every((usage) => usage.cost?.source === 'reported');
  const cost = reported ? sumCallCosts(billed) : undefined;
  return { ...(cached > 0 ? { cachedPromptTokens: cached } : {}), ...(cost ? { cost } : {}) };
}
