import { z } from 'zod';

import { JudgeOrders } from '../config/judge-orders.js';
import { Workflow } from '../workflow/workflow.js';

/**
 * What the judge values, as the judge is told it: its lens, the task's focus, and the six points of its rubric. The
 * optimizer is shown them, so that it designs for the judge it faces rather than guessing.
 */
export const JudgeCriteria = z.object({
  lens: z.string(),
  focus: z.string().nullable(),
  rubric: z.array(z.object({ name: z.string(), question: z.string() })),
});
export type JudgeCriteria = z.infer<typeof JudgeCriteria>;

/**
 * Whom the next design faces and what it takes to become the best: the champion rule, the judge's A/B orders, and the
 * fact that only a win changes the best design (a tie, a loss or a failed run keeps it).
 */
export const NextMatch = z.object({
  /** The label the proposed design will run as (`v3`). */
  version: z.string(),
  /** The run its workspace is judged against first: the champion (`paper`), or the reference (`official`). */
  opponent: z.object({ label: z.string(), bare: z.boolean() }),
  /** The best design so far, or the bare reference run while no design has beaten it. */
  champion: z.object({ label: z.string(), bare: z.boolean() }),
  rule: z.enum(['paper', 'official']),
  judgeMode: JudgeOrders,
});
export type NextMatch = z.infer<typeof NextMatch>;

/**
 * What one run of a design may use, as the run configures its episodes: the wall clock, the output tokens of each
 * model call and of the whole run, and the number of model calls. The optimizer is told them, so that it designs a
 * team that can finish: a run stopped by a limit fails, and a failed run loses.
 */
export const TeamBudgets = z.object({
  timeoutSeconds: z.number().positive(),
  maxOutputTokensPerCall: z.number().int().positive(),
  /** Output tokens of the whole run (`budgets.episodeOutputBudget`); null: no limit. */
  outputTokens: z.number().int().positive().nullable(),
  /** Model calls of the whole run; null: no limit (the run configuration sets none). */
  modelCalls: z.number().int().positive().nullable(),
});
export type TeamBudgets = z.infer<typeof TeamBudgets>;

/** A validated proposal, in this project's names. */
export const WorkflowProposal = z.object({
  design: Workflow,
  changes: z.array(z.string()),
  why: z.string(),
  evidenceUsed: z.array(z.string()),
  expectedImpact: z.string(),
  verificationChecks: z.array(z.string()),
});
export type WorkflowProposal = z.infer<typeof WorkflowProposal>;

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
