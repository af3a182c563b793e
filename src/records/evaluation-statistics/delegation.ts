import type { DelegationRate } from '../evaluation-figures.js';
import { compositeKey, groupBy, mean } from './grouping.js';
import type { GradedRollout } from './inputs.js';
import { wilsonInterval } from '../../statistics/wilson.js';

/** Per generation and condition: the share of episodes that called `agent` at least once, and the mean calls and sub-agent threads per episode. */
export function delegationRates(rollouts: readonly GradedRollout[], confidence: number): DelegationRate[] {
  return [
    ...groupBy(rollouts, (rollout) => compositeKey(rollout.generation, rollout.condition)).values(),
  ].map((group) => {
    const delegatingEpisodes = group.filter((rollout) => rollout.delegations > 0).length;
    return {
      generation: group[0]!.generation,
      condition: group[0]!.condition,
      episodes: group.length,
      delegatingEpisodes,
      rate: delegatingEpisodes / group.length,
      rateWilson: wilsonInterval(delegatingEpisodes, group.length, confidence),
      meanDelegations: mean(group.map((rollout) => rollout.delegations)),
      meanSubagentThreads: mean(group.map((rollout) => rollout.subagentThreads)),
    };
  });
}
