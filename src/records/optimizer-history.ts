import { z } from 'zod';

import { TeamDesign } from '../workflow/workflow.js';
import { ExecutionMetadata } from './execution-metadata.js';

/** One side of a comparison: a version of the design, or the bare task (no workflow) for the reference run. */
export const ComparedDesign = z.object({
  /** How the search names it: `v3`, `reference`, `champion v2`. */
  label: z.string().min(1),
  design: TeamDesign.nullable(),
});
export type ComparedDesign = z.infer<typeof ComparedDesign>;

/**
 * The judge's own lists of points against each side of one judgment (its verdict's `against_A` and `against_B`, in the
 * optimizer's terms); absent when the verdict gave none, and then the points are found in the rationale.
 */
const JudgePoints = {
  pointsAgainstCandidate: z.array(z.string()).optional(),
  pointsAgainstOpponent: z.array(z.string()).optional(),
};

/**
 * One judged comparison in the search, in the optimizer's terms: the candidate is the design that was being tried,
 * the opponent what it was compared with. The judge's A/B order is the caller's business.
 */
export const PairwiseComparison = z.object({
  candidate: ComparedDesign,
  opponent: ComparedDesign,
  winner: z.enum(['candidate', 'opponent', 'tie']),
  rationale: z.string(),
  /** Which workspace the judge saw the candidate as, so that "A" and "B" in the rationale can be read. */
  candidatePosition: z.enum(['A', 'B']).optional(),
  ...JudgePoints,
  /**
   * A judgment of both orders: each order's rationale with the workspace the candidate was shown as in it (the
   * combined `rationale` cannot say, since A is the candidate in one order and the opponent in the other).
   */
  orders: z
    .array(
      z.object({ candidatePosition: z.enum(['A', 'B']), rationale: z.string(), ...JudgePoints }).strict(),
    )
    .optional(),
  /** How the candidate's run went, when known. */
  candidateExecution: ExecutionMetadata.optional(),
});
export type PairwiseComparison = z.infer<typeof PairwiseComparison>;
