import { UserError } from '../errors.js';
import { sampleWindows, type SampleableWindow } from '../distill/window-sampler.js';

/** How long a student trains: passes over its windows, drawn by the training sampler in batches. */
export interface StudentTraining {
  /** Windows drawn per step. */
  batchSize: number;
  /** Steps are `ceil(epochs × windows / batchSize)`: every student sees its data about equally often. */
  epochs: number;
  /** The sampler's seed (the same for every student). */
  seed: number;
  /** Chance of the task's orchestrator windows (the sampler's default when absent). */
  orchestratorProbability?: number;
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

/** The student's token accounting: the sampler's plan for its windows, counted exactly. */
export function studentTokens(
  windows: readonly SampleableWindow[],
  training: StudentTraining,
): StudentTokens {
  const steps = studentSteps(windows.length, training);
  const plan = sampleWindows(windows, {
    steps,
    batchSize: training.batchSize,
    seed: training.seed,
    orchestratorProbability: training.orchestratorProbability,
  });
  return {
    windows: windows.length,
    steps,
    batchSize: training.batchSize,
    storedSupervisedTokens: plan.storedSupervisedTokens,
    expectedProcessedSupervisedTokens: plan.expectedProcessedSupervisedTokens,
    processedSupervisedTokens: plan.processedSupervisedTokens,
  };
}
