import { z } from 'zod';

import { JudgeCriteria } from './judge-criteria.js';
import { NextMatch } from './next-match.js';
import { optimizerWorkspaces, type OptimizerInput } from './optimizer-prompt.js';
import { TeamBudgets } from './team-budgets.js';

/**
 * What the optimizer was shown beside its prompt's text, in structured form for whoever reads `optimizer.json`: the
 * judge's criteria, the comparison its design faces, and the workspace excerpts (the opponent's in full, as shown).
 */
export const ShownToOptimizer = z.object({
  criteria: JudgeCriteria.nullable(),
  nextMatch: NextMatch.nullable(),
  /** The current design's workspace: its label and whether an excerpt was given. */
  currentWorkspace: z.object({ label: z.string(), shown: z.boolean() }),
  /**
   * The excerpt of the workspace the next design is judged against, when it is not the current design's, as shown:
   * without the files shown once (`tokens` counts the excerpt as prepared, before they were taken out).
   */
  opponentWorkspace: z.object({ label: z.string(), tokens: z.number().int(), text: z.string() }).nullable(),
  /**
   * Files both workspaces have, shown once; `differing`: those shown with the lines that differ (absent in records
   * written before they were shown once).
   */
  sharedFiles: z.object({ paths: z.array(z.string()), differing: z.array(z.string()) }).optional(),
  /** What a run of the team may use, as the prompt states it (absent when it was not given). */
  budgets: TeamBudgets.optional(),
  /** Comparisons in the history, and how many of them carried the judge's own lists of points. */
  comparisons: z.object({ total: z.number().int(), withJudgePoints: z.number().int() }),
});
export type ShownToOptimizer = z.infer<typeof ShownToOptimizer>;

export function shownToOptimizer(input: OptimizerInput): ShownToOptimizer {
  const workspaces = optimizerWorkspaces(input);
  const opponent = workspaces.opponent;
  const withPoints = input.history.filter((comparison) =>
    (comparison.orders?.length ? comparison.orders : [comparison]).every(
      (reading) => reading.pointsAgainstCandidate !== undefined,
    ),
  ).length;
  const shared = workspaces.shared;
  return {
    criteria: input.judge ?? null,
    nextMatch: input.nextMatch ?? null,
    currentWorkspace: { label: input.current.label, shown: Boolean(input.workspaceEvidence?.trim()) },
    opponentWorkspace:
      opponent.where === 'excerpt' && input.opponentEvidence
        ? { label: opponent.label, tokens: input.opponentEvidence.tokens, text: opponent.text! }
        : null,
    ...(shared
      ? {
          sharedFiles: {
            paths: shared.paths,
            differing: shared.files.filter((file) => file.difference).map((file) => file.path),
          },
        }
      : {}),
    ...(input.budgets ? { budgets: input.budgets } : {}),
    comparisons: { total: input.history.length, withJudgePoints: withPoints },
  };
}
