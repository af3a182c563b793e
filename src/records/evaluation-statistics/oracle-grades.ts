import { bootstrapInterval, type BootstrapOptions } from './bootstrap.js';
import type { GradeSummary, PairedGradeDifference } from '../evaluation-figures.js';
import { compositeKey, groupBy, mean } from './grouping.js';
import type { GradedRollout } from './inputs.js';

/**
 * The oracle's grade per generation and condition: the mean over graded episodes, with a bootstrap
 * interval that resamples episodes within tasks (so a resample keeps the mix of easy and hard tasks).
 */
export function gradeSummaries(
  rollouts: readonly GradedRollout[],
  options: BootstrapOptions,
): GradeSummary[] {
  return [
    ...groupBy(rollouts, (rollout) => compositeKey(rollout.generation, rollout.condition)).values(),
  ].map((group) => {
    const graded = gradesOf(group);
    const strata = [...groupBy(graded, (rollout) => rollout.task).values()].map((task) =>
      task.map((rollout) => rollout.grade),
    );
    return {
      generation: group[0]!.generation,
      condition: group[0]!.condition,
      episodes: group.length,
      graded: graded.length,
      mean: mean(graded.map((rollout) => rollout.grade)),
      interval:
        graded.length === 0 ? null : bootstrapInterval(strata, (resample) => mean(resample.flat()), options),
    };
  });
}

/**
 * grade(generation) − grade(reference) on the episodes that ran with the same task, condition and
 * replicate (the same sampling seed): pairing removes the task's and the seed's share of the
 * variation. Pairs where either episode is ungraded are left out.
 */
export function pairedGradeDifferences(
  rollouts: readonly GradedRollout[],
  reference: string,
  options: BootstrapOptions,
): PairedGradeDifference[] {
  const referenceGrades = new Map(
    gradesOf(rollouts.filter((rollout) => rollout.generation === reference)).map((rollout) => [
      compositeKey(rollout.task, rollout.condition, rollout.replicate),
      rollout.grade,
    ]),
  );
  const others = rollouts.filter((rollout) => rollout.generation !== reference);
  return [...groupBy(others, (rollout) => compositeKey(rollout.generation, rollout.condition)).values()].map(
    (group) => {
      const differences = gradesOf(group).flatMap((rollout) => {
        const baseline = referenceGrades.get(
          compositeKey(rollout.task, rollout.condition, rollout.replicate),
        );
        return baseline === undefined ? [] : [{ task: rollout.task, difference: rollout.grade - baseline }];
      });
      const strata = [...groupBy(differences, (entry) => entry.task).values()].map((task) =>
        task.map((entry) => entry.difference),
      );
      return {
        generation: group[0]!.generation,
        reference,
        condition: group[0]!.condition,
        pairs: differences.length,
        meanDifference: mean(differences.map((entry) => entry.difference)),
        interval:
          differences.length === 0
            ? null
            : bootstrapInterval(strata, (resample) => mean(resample.flat()), options),
      };
    },
  );
}

type Graded = GradedRollout & { grade: number };

export function gradesOf(rollouts: readonly GradedRollout[]): Graded[] {
  return rollouts.filter((rollout): rollout is Graded => rollout.grade !== null);
}
