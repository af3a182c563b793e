import { UserError } from '../errors.js';
import { sampleWindows, type SampleableWindow } from '../distill/window-sampler.js';
import { resolveHyperparameters, type TrainingHyperparameters } from '../train/hyperparameters.js';

/** How long a student trains: passes over its windows, drawn by the training sampler in batches. */
export interface StudentTraining {
  /** Windows drawn per step. */
  batchSize: number;
  /** Steps are `ceil(epochs × windows / batchSize)`: every student sees its data about equally often. */
  epochs: number;
  /** The sampler's seed (the same for every student). */
  seed: number;
}

/** A student's supervised tokens: what its data holds and what its training processes, from the sampler. */
export interface StudentTokens {
  windows: number;
  steps: number;
  batchSize: number;
  /** Every window's supervised tokens once. */
  storedSupervisedTokens: number;
  /** The sampler's exact expectation over seeds. */
  expectedProcessedSupervisedTokens: number;
  /** The supervised tokens of the windows this seed draws: the figure's x axis. */
  processedSupervisedTokens: number;
}

export function studentSteps(
  windows: number,
  training: Pick<StudentTraining, 'batchSize' | 'epochs'>,
): number {
  if (!(training.epochs > 0) || !Number.isFinite(training.epochs))
    throw new UserError(`epochs ${training.epochs}: use a positive number`);
  return Math.max(1, Math.ceil((training.epochs * windows) / training.batchSize));
}

/**
 * What a student's trainer is given and the tokens it processes, from one set of settings: the run's hyperparameters
 * with the student's steps and batch size. The tokens are the sampler's plan for its windows with the same seed,
 * steps, batch size and orchestrator probability, so they are what the trainer's own sampler draws.
 */
export function studentTrainingPlan(
  windows: readonly SampleableWindow[],
  training: StudentTraining,
  hyperparameters: Partial<TrainingHyperparameters> = {},
): { tokens: StudentTokens; hyper: Partial<TrainingHyperparameters> } {
  const steps = studentSteps(windows.length, training);
  const { orchestratorProbability } = resolveHyperparameters({ ...hyperparameters, steps });
  const hyper = { ...hyperparameters, batchSize: training.batchSize, steps, orchestratorProbability };
  return { tokens: studentTokens(windows, { ...hyper, seed: training.seed }), hyper };
}

/** The sampler's plan for a student's windows, counted exactly. */
export function studentTokens(
  windows: readonly SampleableWindow[],
  settings: { steps: number; batchSize: number; seed: number; orchestratorProbability: number },
): StudentTokens {
  const { steps } = settings;
  const plan = sampleWindows(windows, settings);
  return {
    windows: windows.length,
    steps,
    batchSize: settings.batchSize,
    storedSupervisedTokens: plan.storedSupervisedTokens,
    expectedProcessedSupervisedTokens: plan.expectedProcessedSupervisedTokens,
    processedSupervisedTokens: plan.processedSupervisedTokens,
  };
}
