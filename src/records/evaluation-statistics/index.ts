/**
 * Evaluation statistics: pure functions from judgments and graded rollouts to figures, no file or
 * network access (the pipeline in src/evaluate/ gathers the inputs and writes the summary).
 */
export * from './inputs.js';
export * from '../../statistics/interval.js';
export * from '../evaluation-figures.js';
export { allJudges, computeEvaluationFigures, type FigureInputs, type FigureOptions } from './figures.js';
export { combinedVerdict, evaluationVerdicts, evaluatorAgreement, oracleEvaluator } from './agreement.js';
export { delegationRates } from './delegation.js';
export {
  gradingCoverage,
  noGradedLoopTaskReason,
  noGradedTaskReason,
  noOracleVerdictReason,
} from './grading-coverage.js';
export { gradeSummaries, pairedGradeDifferences } from './oracle-grades.js';
export { orderInconsistency } from './order-inconsistency.js';
export { inBottomHalf, judgeDirectedText, rewardHacking } from './reward-hacking.js';
export { generationStrengths } from './strengths.js';
export { efficiencyRatio, gradePerThousandTokens, tokenEfficiency } from './token-efficiency.js';
export { pairPreferences, type PairPreference } from './pair-preferences.js';
export { clopperPearsonInterval } from '../../statistics/clopper-pearson.js';
export {
  judgeWinRates,
  tallyOutcomes,
  winRateCell,
  winRates,
  type OutcomeTally,
  type ScoredVerdict,
} from './win-rates.js';
export { wilsonInterval } from '../../statistics/wilson.js';
export { signTest } from '../../statistics/sign-test.js';
export { cohenKappa, type Agreement } from './kappa.js';
export { bootstrapInterval, bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
export { normalQuantile, twoSidedZ } from '../../statistics/normal-quantile.js';
export { oraclePreference } from './oracle-preference.js';
