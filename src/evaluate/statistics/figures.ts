import type { EvaluationFigures } from './figures-schema.js';
import type { AgreementSample, GradedRollout, JudgedPair, SelectedRun } from './inputs.js';

export interface FigureOptions {
  /** Candidate against baseline, e.g. [{candidate: "L1", baseline: "L0"}]; default: every pair present in the judgments. */
  comparisons?: readonly { candidate: string; baseline: string }[];
  /** The generation others are measured against (grade differences, token ratios, strengths). Default "L0". */
  reference?: string;
  /** Grades within this many points of each other make the oracle's preference a tie. Default 2. */
  tieMargin?: number;
  /** Seed of every bootstrap (each figure restarts from it, so a figure does not depend on the others). Default 0. */
  bootstrapSeed?: number;
  /** Resamples per bootstrap. Default 1000. */
  resamples?: number;
  /** Default 0.95. */
  confidence?: number;
  /** The condition multi-agent conditions are compared with for token efficiency. Default "single-agent". */
  singleAgentCondition?: string;
  /** Judges pooled into "all judges" and the Bradley–Terry strengths. Default: every judge in the judgments. */
  pooledJudges?: readonly string[];
}

export interface FigureInputs {
  judgments: readonly JudgedPair[];
  rollouts: readonly GradedRollout[];
  /** Runs the loop selected for training, for the reward-hacking counts. */
  selectedRuns?: readonly SelectedRun[];
  /** Further verdict sets for evaluator agreement, e.g. a sample of each generation's tournament matches. */
  agreementSamples?: readonly AgreementSample[];
}

/** Every figure of an evaluation from its judgments and graded rollouts; pure, and reproducible from the options. */
export function computeEvaluationFigures(
  inputs: FigureInputs,
  options: FigureOptions = {},
): EvaluationFigures {
  void inputs;
  void options;
  throw new Error('not yet');
}
