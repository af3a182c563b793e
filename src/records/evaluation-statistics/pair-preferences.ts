import { compareIds } from '../../ranking/matches.js';
import { compositeKey, groupBy } from './grouping.js';
import type { PairOutcome } from './inputs.js';

/** One verdict on one episode pair of a comparison, from the candidate's view. */
export interface ScoredVerdict {
  task: string;
  replicate: number;
  outcome: PairOutcome;
}

/**
 * One episode pair (a task and a replicate: the candidate's and the baseline's episodes, run with the same sampling
 * seed) and what its judgments say together. The pair, not the judgment, is the independent unit: every judge, seed
 * and order judged the same two workspaces.
 */
export interface PairPreference {
  task: string;
  replicate: number;
  /** Judgments of the pair (every judge given, seed and order). */
  judgments: number;
  /** The mean of its judgments from the candidate's view: win 1, tie ½, loss 0. */
  preference: number;
  /** Above ½ a win for the candidate, below ½ a loss, exactly ½ a tie. */
  outcome: PairOutcome;
}

const points: Record<PairOutcome, number> = { win: 2, tie: 1, loss: 0 };

/** The pairs of the verdicts, in task then replicate order. */
export function pairPreferences(verdicts: readonly ScoredVerdict[]): PairPreference[] {
  return [...groupBy(verdicts, (verdict) => compositeKey(verdict.task, verdict.replicate)).values()]
    .map((pair) => {
      // Points doubled (win 2, tie 1, loss 0) so that comparing with half the count is exact.
      const doubled = pair.reduce((sum, verdict) => sum + points[verdict.outcome], 0);
      const outcome: PairOutcome = doubled > pair.length ? 'win' : doubled < pair.length ? 'loss' : 'tie';
      return {
        task: pair[0]!.task,
        replicate: pair[0]!.replicate,
        judgments: pair.length,
        preference: doubled / (2 * pair.length),
        outcome,
      };
    })
    .sort((left, right) => compareIds(left.task, right.task) || left.replicate - right.replicate);
}
