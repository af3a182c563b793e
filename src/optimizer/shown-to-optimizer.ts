import { optimizerWorkspaces, type OptimizerInput } from './optimizer-prompt.js';
import type { ShownToOptimizer } from '../records/optimizer-call.js';

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
