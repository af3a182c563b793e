import { z } from 'zod';

import { compositeKey, distinctSorted, groupBy, mean } from './evaluation-statistics/grouping.js';
import type { BenchmarkTrial, VerifiedTrial } from './benchmark-records.js';

/**
 * The statistic public leaderboards give beside ours: each label's mean reward over its runs (run `k` is trial `k` of
 * every task) ± the sample standard deviation of those runs' means, on the tasks that have a result for every label
 * compared, so that generations are compared on the same tasks. Trials lost to infrastructure are counted apart,
 * never as a zero.
 */
export const OfficialFigure = z
  .object({
    label: z.string(),
    /** Each run's mean reward over the compared tasks, by trial number. */
    runMeans: z.array(z.number()),
    mean: z.number().nullable(),
    /** Sample standard deviation (n − 1) of the run means; null with fewer than two runs. */
    sampleSd: z.number().nullable(),
    /** This label's trials lost to infrastructure (after their retries): not in the figure. */
    lostToInfrastructure: z.number().int().nonnegative(),
  })
  .strict();
export type OfficialFigure = z.infer<typeof OfficialFigure>;

export const OfficialFigures = z
  .object({
    /** The tasks every label has a result for, in every run: the figures are over these alone. */
    tasks: z.array(z.string()),
    /** Tasks left out because some label lacks a result for one of its runs (lost to infrastructure, or not run). */
    incompleteTasks: z.array(z.string()),
    figures: z.array(OfficialFigure),
  })
  .strict();
export type OfficialFigures = z.infer<typeof OfficialFigures>;

/**
 * Why a trial says nothing of the agent, or null when it counts: the trial's environment never started (an engine's
 * error, an image it could not get), the harness crashed before its first model call, or the verifier's environment
 * never ran test.sh. A trial the benchmark marked when it retried it says so itself.
 */
export function infrastructureLoss(
  trial: Pick<BenchmarkTrial, 'status' | 'failure' | 'outputTokens' | 'agent'> & {
    lostToInfrastructure?: string | null | undefined;
    verification?: Pick<VerifiedTrial['verification'], 'status' | 'exitCode' | 'detail'>;
  },
): string | null {
  if (trial.lostToInfrastructure) return trial.lostToInfrastructure;
  if (trial.status === 'failed' && trial.failure !== null && STARTED_NOTHING.test(trial.failure)) {
    return trial.failure;
  }
  if (trial.status === 'harness_crash' && trial.outputTokens === 0) {
    return `the harness crashed before its first model call${trial.failure === null ? '' : `: ${trial.failure}`}`;
  }
  const verification = trial.verification;
  if (verification?.status === 'crashed' && verification.exitCode === null) {
    return `the verifier never ran test.sh to its end: ${verification.detail ?? 'no detail'}`;
  }
  return null;
}

/** Failures of the machinery before any of the agent's or the task's commands ran. */
const STARTED_NOTHING =
  /could not be started|did not open|could not be made|could not be pulled|could not be built|engine/i;

export function officialFigures(trials: readonly VerifiedTrial[]): OfficialFigures {
  const labels = distinctSorted(trials.map((trial) => trial.label));
  const runs = [...new Set(trials.map((trial) => trial.trial))].sort((a, b) => a - b);
  const counted = new Map(
    trials
      .filter((trial) => infrastructureLoss(trial) === null)
      .map((trial) => [compositeKey(trial.label, trial.task, trial.trial), trial]),
  );
  const allTasks = distinctSorted(trials.map((trial) => trial.task));
  const tasks = allTasks.filter((task) =>
    labels.every((label) => runs.every((run) => counted.has(compositeKey(label, task, run)))),
  );
  const byLabel = groupBy(trials, (trial) => trial.label);
  return {
    tasks,
    incompleteTasks: allTasks.filter((task) => !tasks.includes(task)),
    figures: labels.map((label) => {
      const runMeans =
        tasks.length === 0
          ? []
          : runs.map((run) =>
              mean(
                tasks.map((task) => counted.get(compositeKey(label, task, run))!.verification.reward ?? 0),
              )!,
            );
      return {
        label,
        runMeans,
        mean: mean(runMeans),
        sampleSd: sampleStandardDeviation(runMeans),
        lostToInfrastructure: byLabel.get(label)!.filter((trial) => infrastructureLoss(trial) !== null)
          .length,
      };
    }),
  };
}

export function sampleStandardDeviation(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const average = mean(values)!;
  const squares = values.reduce((sum, value) => sum + (value - average) ** 2, 0);
  return Math.sqrt(squares / (values.length - 1));
}

/** `0.625 ± 0.177`, or the mean alone with one run, or `—` on no compared task. */
export function officialText(figure: Pick<OfficialFigure, 'mean' | 'sampleSd'>, digits = 3): string {
  if (figure.mean === null) return '—';
  return figure.sampleSd === null
    ? figure.mean.toFixed(digits)
    : `${figure.mean.toFixed(digits)} ± ${figure.sampleSd.toFixed(digits)}`;
}

/** The rows every reader shows: label, mean ± sample SD, runs, trials lost to infrastructure. */
export function officialRows(official: OfficialFigures): string[][] {
  return official.figures.map((figure) => [
    figure.label,
    officialText(figure),
    String(figure.runMeans.length),
    String(figure.lostToInfrastructure),
  ]);
}

export const OFFICIAL_COLUMNS = ['label', 'mean ± sample SD over runs', 'runs', 'lost to infrastructure'];

/** What the official figure is over, in a sentence. */
export function officialCaption(official: OfficialFigures): string {
  const left =
    official.incompleteTasks.length === 0
      ? ''
      : `; left out, without a result for every label in every run: ${official.incompleteTasks.join(', ')}`;
  return `The official statistic: each run's mean reward over the ${official.tasks.length} task(s) every label has a result for, averaged over runs ± their sample standard deviation; trials lost to infrastructure (retried up to twice) are counted apart${left}.`;
}
