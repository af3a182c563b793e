import { judgeSeeds } from '../config/judge-orders.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import { defaultComparisons } from '../evaluate/evaluation-plan.js';
import { judgmentsPerStep } from '../evaluate/evaluation-judgments.js';
import { UserError } from '../errors.js';
import { firstRoundPairs } from './loop-work.js';
import { exactly, type StageWork } from './plan-types.js';

/** A generation the loop will have registered: its name and the one it was trained from. */
export interface PlannedGeneration {
  name: string;
  parent: string | null;
  /** Its round's collection and tournament will exist (every generation but the last one trained). */
  distilled: boolean;
}

/** L0 … L<rounds>, each trained from the one before; all but the last play a round of the loop. */
export function plannedGenerations(rounds: number): PlannedGeneration[] {
  return Array.from({ length: rounds + 1 }, (_, index) => ({
    name: `L${index}`,
    parent: index === 0 ? null : `L${index - 1}`,
    distilled: index < rounds,
  }));
}

/**
 * `mass eval` after the loop, as `evaluateRun` plans it: each comparison (as given, else each model against the first
 * and against its parent: `defaultComparisons`) on every task, condition and rollout, an episode per side (shared by
 * the pairs it belongs to), judged by every external judge and the candidate's self-judge with every seed, in the
 * configured orders (`judgmentsPerStep`); then, for each evaluated generation that ran a round, up to
 * `tournamentSample` of each task's tournament matches judged again by each external judge.
 */
export function evaluationWork(options: {
  config: RunConfig;
  evaluation: EvaluationConfig;
  generations: readonly PlannedGeneration[];
  /** The tasks evaluated: `evaluation.tasks`, else the suite's test split. */
  evaluationTasks: number;
  /** A generation's tasks whose search beat its reference: their tournaments the evaluation samples. */
  distilledTasks: (generation: string) => number;
}): StageWork {
  const { config, evaluation, generations } = options;
  const models = evaluation.models
    ? evaluation.models.map((model) => ({ name: model.name, parent: null, distilled: false }))
    : chosenGenerations(generations, evaluation.generations);
  const comparisons = evaluation.comparisons ?? defaultComparisons(models);
  const sides = new Set(comparisons.flatMap((pair) => [pair.candidate, pair.baseline]));
  const replicates = options.evaluationTasks * evaluation.conditions.length * evaluation.rollouts;
  const seeds = judgeSeeds(evaluation.orders, evaluation.judgeSeeds).length;
  const judgesPerPair = evaluation.judges.length + (evaluation.selfJudge ? 1 : 0);
  const pairSteps = comparisons.length * replicates * judgesPerPair * seeds;

  const perTask = Math.min(evaluation.tournamentSample, firstRoundPairs(config, config.distill.runs));
  const sampled = comparisons.length === 0 ? [] : models.filter((model) => model.distilled);
  const sampledTasks = sampled.reduce((sum, model) => sum + options.distilledTasks(model.name), 0);
  const sampleSteps = sampledTasks * perTask * evaluation.judges.length * seeds;
  const steps = pairSteps + sampleSteps;
  const calls = judgmentsPerStep(evaluation.orders);
  const perExternal = (comparisons.length * replicates + sampledTasks * perTask) * seeds * calls;
  const callsByJudge: Record<string, number> = {};
  for (const judge of evaluation.judges) callsByJudge[judge.name ?? judge.model] = perExternal;
  if (evaluation.selfJudge) callsByJudge.self = comparisons.length * replicates * seeds * calls;
  const notes = ['every episode succeeds and every tournament match decided'];
  if (evaluation.transfer.length > 0)
    notes.push('evaluation.transfer: the workflow transfers are not counted');
  if (evaluation.searchCoverage) notes.push('evaluation.searchCoverage: its judgments are not counted');
  return {
    stage: 'evaluation',
    generation: null,
    tasks: options.evaluationTasks,
    episodes: exactly(sides.size * replicates),
    judgments: exactly(steps),
    judgeCalls: exactly(steps * calls),
    optimizerCalls: exactly(0),
    callsByJudge,
    notes,
  };
}

function chosenGenerations(
  generations: readonly PlannedGeneration[],
  names: readonly string[] | undefined,
): PlannedGeneration[] {
  if (!names) return [...generations];
  return names.map((name) => {
    const found = generations.find((generation) => generation.name === name);
    if (!found) {
      throw new UserError(
        `evaluation.generations: ${name} is not a generation of this plan (${generations.map((generation) => generation.name).join(', ')}); give --rounds to plan more`,
      );
    }
    return found;
  });
}
