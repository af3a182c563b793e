import { bootstrapInterval, type BootstrapOptions } from '../records/evaluation-statistics/bootstrap.js';
import { compositeKey, groupBy, mean } from '../records/evaluation-statistics/grouping.js';
import type { BenchmarkFigures, TaskRow, VerifiedTrial } from '../records/benchmark-records.js';

/** A trial's reward in the figures: an unscored trial (no reward, a timeout, a crash) counts 0, and is counted apart. */
export function rewardOf(trial: VerifiedTrial): number {
  return trial.verification.reward ?? 0;
}

/** 1,000 × Σ reward / Σ output tokens: a ratio of totals, so a few very short trials cannot dominate it. */
export function rewardPerThousandTokens(trials: readonly VerifiedTrial[]): number | null {
  const tokens = trials.reduce((sum, trial) => sum + trial.outputTokens, 0);
  if (tokens === 0) return null;
  return (1000 * trials.reduce((sum, trial) => sum + rewardOf(trial), 0)) / tokens;
}

/** The mean over tasks of each task's mean reward: every task weighs the same, however many trials it has. */
function meanOverTasks(byTask: ReadonlyArray<readonly VerifiedTrial[]>): number | null {
  const tasks = byTask.filter((trials) => trials.length > 0);
  return mean(tasks.map((trials) => mean(trials.map(rewardOf))!));
}

/**
 * Each label's figures on one benchmark. Intervals resample tasks with replacement (the task is the unit: its trials
 * are not independent of each other); a ratio to the reference resamples the same tasks on both sides, whose trials
 * ran with the same sampling seeds.
 */
export function benchmarkFigures(
  trials: readonly VerifiedTrial[],
  options: BootstrapOptions & { reference: string | null },
): BenchmarkFigures[] {
  const byLabel = groupBy(trials, (trial) => trial.label);
  const reference = options.reference === null ? undefined : byLabel.get(options.reference);
  return [...byLabel.values()].map((labelTrials) => {
    const { label, agent } = labelTrials[0]!;
    const tasks = [...groupBy(labelTrials, (trial) => trial.task).values()];
    const models = agent === 'team' || agent === 'single-agent';
    return {
      label,
      agent,
      trials: labelTrials.length,
      tasks: tasks.length,
      unscored: labelTrials.filter((trial) => trial.verification.status !== 'scored').length,
      meanReward: meanOverTasks(tasks),
      meanRewardInterval: bootstrapInterval([tasks], (resample) => meanOverTasks(resample[0]!), options),
      meanOutputTokens: mean(labelTrials.map((trial) => trial.outputTokens))!,
      rewardPerThousandTokens: rewardPerThousandTokens(labelTrials),
      ratioToReference:
        reference === undefined || label === options.reference
          ? null
          : efficiencyRatio(labelTrials, reference, options),
      delegationRate: models
        ? labelTrials.filter((trial) => trial.delegations > 0).length / labelTrials.length
        : null,
      meanDelegations: mean(labelTrials.map((trial) => trial.delegations))!,
    };
  });
}

/** reward per 1,000 tokens of `numerator` over `denominator`'s, on the tasks both ran, with a paired task bootstrap. */
function efficiencyRatio(
  numerator: readonly VerifiedTrial[],
  denominator: readonly VerifiedTrial[],
  options: BootstrapOptions,
): BenchmarkFigures['ratioToReference'] {
  const top = groupBy(numerator, (trial) => trial.task);
  const bottom = groupBy(denominator, (trial) => trial.task);
  const shared = [...top.keys()].filter((task) => bottom.has(task));
  const ratio = (tasks: readonly string[]): number | null => {
    const over = rewardPerThousandTokens(tasks.flatMap((task) => top.get(task)!));
    const under = rewardPerThousandTokens(tasks.flatMap((task) => bottom.get(task)!));
    return over === null || under === null || under === 0 ? null : over / under;
  };
  return {
    value: ratio(shared),
    interval: bootstrapInterval([shared], (resample) => ratio(resample[0]!), options),
  };
}

/** One row per task and label: its trials' mean reward, output tokens, and how their verifications ended. */
export function taskRows(trials: readonly VerifiedTrial[]): TaskRow[] {
  return [...groupBy(trials, (trial) => compositeKey(trial.task, trial.label)).values()].map((group) => {
    const statuses: Record<string, number> = {};
    for (const trial of group) {
      statuses[trial.verification.status] = (statuses[trial.verification.status] ?? 0) + 1;
    }
    return {
      task: group[0]!.task,
      label: group[0]!.label,
      trials: group.length,
      meanReward: mean(group.map(rewardOf)),
      meanOutputTokens: mean(group.map((trial) => trial.outputTokens))!,
      statuses,
    };
  });
}
