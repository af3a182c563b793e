import { z } from 'zod';

import { JudgeCriteria } from './judge-criteria.js';
import { NextMatch } from './next-match.js';
import type { OptimizerInput } from './optimizer-prompt.js';

/**
 * What the optimizer was shown beside its prompt's text, in structured form for whoever reads `optimizer.json`: the
 * judge's criteria, the comparison its design faces, and the workspace excerpts (the opponent's in full, as shown).
 */
export const ShownToOptimizer = z.object({
  criteria: JudgeCriteria.nullable(),
  nextMatch: NextMatch.nullable(),
  /** The current design's workspace: its label and whether an excerpt was given. */
  currentWorkspace: z.object({ label: z.string(), shown: z.boolean() }),
  /** The excerpt of the workspace the next design is judged against, when it is not the current design's. */
  opponentWorkspace: z.object({ label: z.string(), tokens: z.number().int(), text: z.string() }).nullable(),
  /** Comparisons in the history, and how many of them carried the judge's own lists of points. */
  comparisons: z.object({ total: z.number().int(), withJudgePoints: z.number().int() }),
});
export type ShownToOptimizer = z.infer<typeof ShownToOptimizer>;

export function shownToOptimizer(input: OptimizerInput): ShownToOptimizer {
  const opponent = input.opponentEvidence;
  const opponentShown =
    opponent !== undefined &&
    input.nextMatch !== undefined &&
    opponent.label === input.nextMatch.opponent.label &&
    opponent.label !== input.current.label &&
    opponent.text.trim() !== '';
  const withPoints = input.history.filter((comparison) =>
    (comparison.orders?.length ? comparison.orders : [comparison]).every(
      (reading) => reading.pointsAgainstCandidate !== undefined,
    ),
  ).length;
  return {
    criteria: input.judge ?? null,
    nextMatch: input.nextMatch ?? null,
    currentWorkspace: { label: input.current.label, shown: Boolean(input.workspaceEvidence?.trim()) },
    opponentWorkspace: opponentShown
      ? { label: opponent.label, tokens: opponent.tokens, text: opponent.text.trim() }
      : null,
    comparisons: { total: input.history.length, withJudgePoints: withPoints },
  };
}
