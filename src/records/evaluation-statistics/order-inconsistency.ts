import type { OrderInconsistency } from '../evaluation-figures.js';
import { compositeKey, groupBy, mean } from './grouping.js';
import type { JudgedPair } from './inputs.js';
import { wilsonInterval } from '../../statistics/wilson.js';

/**
 * Per judge: of the seeds it judged a pair with in both orders, the share whose two verdicts disagree once both are
 * read from the candidate's view, averaged per episode pair first, since the seeds of one pair judged the same two
 * workspaces. A judge that always prefers whichever episode is shown first disagrees on every seed (rate 1); a
 * position-blind judge on none.
 */
export function orderInconsistency(
  judgments: readonly JudgedPair[],
  confidence: number,
): OrderInconsistency[] {
  return [...groupBy(judgments, (judgment) => judgment.judge)].map(([judge, judged]) => {
    const pairs = groupBy(judged, (judgment) =>
      compositeKey(
        judgment.task,
        judgment.condition,
        judgment.replicate,
        judgment.candidate,
        judgment.baseline,
      ),
    );
    const shares: number[] = [];
    let seedsInBothOrders = 0;
    let inconsistent = 0;
    for (const pair of pairs.values()) {
      let seeds = 0;
      let disagreeing = 0;
      for (const seed of groupBy(pair, (judgment) => String(judgment.seed)).values()) {
        const candidateFirst = seed.find((judgment) => judgment.order === 'candidate-first');
        const baselineFirst = seed.find((judgment) => judgment.order === 'baseline-first');
        if (!candidateFirst || !baselineFirst) continue;
        seeds++;
        if (candidateFirst.outcome !== baselineFirst.outcome) disagreeing++;
      }
      if (seeds === 0) continue;
      seedsInBothOrders += seeds;
      inconsistent += disagreeing;
      shares.push(disagreeing / seeds);
    }
    const sum = shares.reduce((total, share) => total + share, 0);
    return {
      judge,
      pairsInBothOrders: shares.length,
      seedsInBothOrders,
      inconsistent,
      rate: mean(shares),
      rateWilson: wilsonInterval(sum, shares.length, confidence),
    };
  });
}
