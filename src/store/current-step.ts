import { AsyncLocalStorage } from 'node:async_hooks';

/** The step whose work is running: its key and its run's directory. */
export interface CurrentStep {
  key: string;
  runDirectory: string;
}

const storage = new AsyncLocalStorage<CurrentStep>();

/** Runs `fn` as the work of `step`: everything it awaits sees the step as `currentStep()` (the innermost one wins). */
export function inStep<T>(step: CurrentStep, fn: () => T): T {
  return storage.run(step, fn);
}

/**
 * The step the calling code works for, when it runs inside `StepRunner.run`; undefined outside any step. What records
 * the model calls in flight beside a run (`model-calls-open.json`) finds its run and step here.
 */
export function currentStep(): CurrentStep | undefined {
  return storage.getStore();
}
