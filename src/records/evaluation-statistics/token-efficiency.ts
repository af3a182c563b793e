import { bootstrapInterval, type BootstrapOptions } from './bootstrap.js';
import type { Ratio, TokenEfficiency } from '../evaluation-figures.js';
import { compositeKey, groupBy, mean } from './grouping.js';
import type { GradedRollout } from './inputs.js';
import { gradesOf } from './oracle-grades.js';

/**
 * 1,000 × Σ grade / Σ output tokens over the graded episodes: the paper's "score per output token",
 * a ratio of totals, so a few very short episodes cannot dominate it as a mean of per-episode ratios
 * would. Null with no graded episode or no output token.
 */
export function gradePerThousandTokens(rollouts: readonly GradedRollout[]): number | null {
  const graded = gradesOf(rollouts);
  const tokens = graded.reduce((sum, rollout) => sum + rollout.outputTokens, 0);
  if (graded.length === 0 || tokens === 0) return null;
  return (1000 * graded.reduce((sum, rollout) => sum + rollout.grade, 0)) / tokens;
}

export interface TokenEfficiencyOptions extends BootstrapOptions {
  reference: string;
  singleAgentCondition: string;
}

/**
 * Output tokens and grade per 1,000 of them, per generation and condition, with two ratios: to the
 * reference generation in the same condition, and (for other conditions) to the same generation
 * in the single-agent condition. Each ratio's interval resamples replicates within tasks, a
 * replicate carrying both sides' episodes (they ran with the same sampling seed).
 */
export function tokenEfficiency(
  rollouts: readonly GradedRollout[],
  options: TokenEfficiencyOptions,
): TokenEfficiency[] {
  const byGroup = groupBy(rollouts, (rollout) => compositeKey(rollout.generation, rollout.condition));
  const groupOf = (generation: string, condition: string): GradedRollout[] =>
    byGroup.get(compositeKey(generation, condition)) ?? [];
  return [...byGroup.values()].map((group) => {
    const { generation, condition } = group[0]!;
    return {
      generation,
      condition,
      episodes: group.length,
      meanOutputTokens: mean(group.map((rollout) => rollout.outputTokens)),
      gradePerThousandTokens: gradePerThousandTokens(group),
      ratioToReference:
        generation === options.reference || groupOf(options.reference, condition).length === 0
          ? null
          : efficiencyRatio(group, groupOf(options.reference, condition), options),
      ratioToSingleAgent:
        condition === options.singleAgentCondition ||
        groupOf(generation, options.singleAgentCondition).length === 0
          ? null
          : efficiencyRatio(group, groupOf(generation, options.singleAgentCondition), options),
    };
  });
}

/** gradePerThousandTokens(numerator) / gradePerThousandTokens(denominator) with its bootstrap interval. */
export function efficiencyRatio(
  numerator: readonly GradedRollout[],
  denominator: readonly GradedRollout[],
  options: BootstrapOptions,
): Ratio {
  const ratioOf = (top: readonly GradedRollout[], bottom: readonly GradedRollout[]): number | null => {
    const upper = gradePerThousandTokens(top);
    const lower = gradePerThousandTokens(bottom);
    return upper === null || lower === null || lower === 0 ? null : upper / lower;
  };
  const sides = [
    ...numerator.map((rollout) => ({ rollout, side: 'numerator' as const })),
    ...denominator.map((rollout) => ({ rollout, side: 'denominator' as const })),
  ];
  const strata = [...groupBy(sides, (entry) => entry.rollout.task).values()].map((task) => [
    ...groupBy(task, (entry) => compositeKey(entry.rollout.replicate)).values(),
  ]);
  const ratio = ratioOf(numerator, denominator);
  const interval =
    ratio === null
      ? null
      : bootstrapInterval(
          strata,
          (resample) => {
            const drawn = resample.flat(2);
            return ratioOf(
              drawn.filter((entry) => entry.side === 'numerator').map((entry) => entry.rollout),
              drawn.filter((entry) => entry.side === 'denominator').map((entry) => entry.rollout),
            );
          },
          options,
        );
  return { ratio, interval };
}
