import type { OrderInconsistency } from './figures-schema.js';
import { compositeKey, groupBy } from './grouping.js';
import type { JudgedPair } from './inputs.js';
import { wilsonInterval } from './wilson.js';

/**
 * Per judge: of the pairs it judged in both orders with the same seed, the share whose two verdicts
 * disagree once both are read from the candidate's view. A judge that always prefers whichever
 * episode is shown first disagrees on every pair (rate 1); a position-blind judge on none.
 */
export function orderInconsistency(
  judgments: readonly JudgedPair[],
  confidence: number,
): OrderInconsistency[] {
  return [...groupBy(judgments, (judgment) => judgment.judge)].map(([judge, judged]) => {
    let pairsInBothOrders = 0;
    let inconsistent = 0;
    const byPair = groupBy(judged, (judgment) =>
      compositeKey(
        judgment.task,
        judgment.condition,
        judgment.replicate,
        judgment.candidate,
        judgment.baseline,
        judgment.seed,
      ),
    );
    for (const pair of byPair.values()) {
      const candidateFirst = pair.find((judgment) => judgment.order === 'candidate-first');
      const baselineFirst = pair.find((judgment) => judgment.order === 'baseline-first');
      if (!candidateFirst || !baselineFirst) continue;
      pairsInBothOrders++;
      if (candidateFirst.outcome !== baselineFirst.outcome) inconsistent++;
    }
    return {
      judge,
      pairsInBothOrders,
      inconsistent,
      rate: pairsInBothOrders === 0 ? null : inconsistent / pairsInBothOrders,
      rateWilson: wilsonInterval(inconsistent, pairsInBothOrders, confidence),
    };
  });
}
