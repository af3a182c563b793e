/**
 * Evaluation statistics: pure functions from judgments and graded rollouts to figures, no file or
 * network access (the pipeline in src/evaluate/ gathers the inputs and writes the summary).
 */
export * from './inputs.js';
export * from './interval.js';
export * from './figures-schema.js';
export { computeEvaluationFigures, type FigureInputs, type FigureOptions } from './figures.js';
export { wilsonInterval } from './wilson.js';
export { signTest } from './sign-test.js';
export { cohenKappa, type Agreement } from './kappa.js';
export { bootstrapInterval, bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
export { normalQuantile, twoSidedZ } from './normal-quantile.js';
export { oraclePreference } from './oracle-preference.js';
