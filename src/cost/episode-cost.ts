import type { Prices } from '../config/prices.js';
import type { CallCost } from '../model/types.js';
import { computedCost } from './call-cost.js';

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
