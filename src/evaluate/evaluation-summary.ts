import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import type { Run } from '../store/run-store.js';
import type { EvaluationPlan } from './evaluation-plan.js';
import type {
  EvaluationCondition,
  EvaluationEpisode,
  EvaluationSummary,
  GradeRow,
  JudgmentRow,
} from '../records/evaluation-records.js';
import type { LoopOutsideMeasures } from './loop-outside-measures.js';
import {
  computeEvaluationFigures,
  type GradedRollout,
  type JudgedPair,
} from '../records/evaluation-statistics/index.js';
import { TRANSFER_CONDITION, transferRecord, type TransferComparison } from './transfer-plan.js';

/** What a transfer-only evaluation measures of the loops: nothing (it compares no generations). */
export function noLoopMeasures(): LoopOutsideMeasures {
  return { selectedRuns: [], agreementSamples: [], judgments: [], grades: [], tasksWithoutGrader: [] };
}

/** The evaluation's summary from everything it settled: its counts, its figures and their inputs. */
export function summariseEvaluation(options: {
  run: Run<RunConfig>;
  evaluation: EvaluationConfig;
  plan: EvaluationPlan;
  /** Each model's stand-in label (`ServedModel.standIn`). */
  standIns: ReadonlyMap<string, string | null>;
  served: EvaluationSummary['judges'];
  episodes: EvaluationEpisode[];
  grades: GradeRow[];
  judgments: JudgmentRow[];
  outside: LoopOutsideMeasures;
  transfers: readonly TransferComparison[];
  /** Tasks of the evaluation or of the loop's collections whose task.yaml names no grader. */
  tasksWithoutGrader: readonly string[];
}): EvaluationSummary {
  const tasksWithoutGrader = [...new Set(options.tasksWithoutGrader)].sort();
  const { evaluation, plan, episodes, grades, judgments, outside, transfers } = options;
  const comparisons = [
    ...plan.comparisons,
    ...transfers.map(({ candidate, baseline }) => ({ candidate, baseline })),
  ];
  const conditions: EvaluationCondition[] = [
    ...(plan.comparisons.length > 0 ? evaluation.conditions : []),
    ...(transfers.length > 0 ? [TRANSFER_CONDITION] : []),
  ];
  const tasks = [
    ...new Set([
      ...plan.tasks.map((task) => task.manifest.id),
      ...transfers.flatMap((transfer) => transfer.tasks.map(({ task }) => task.manifest.id)),
    ]),
  ];
  const everyJudgment = [...judgments, ...outside.judgments];
  const everyGrade = [...grades, ...outside.grades];
  const gradeOf = new Map(grades.map((row) => [row.episodeId, row.grade]));
  const rollouts: GradedRollout[] = episodes.map((episode) => ({
    task: episode.task,
    condition: episode.condition,
    replicate: episode.replicate,
    generation: episode.model,
    grade: gradeOf.get(episode.episodeId) ?? null,
    outputTokens: episode.outputTokens,
    delegations: episode.delegations,
    subagentThreads: episode.subagentThreads,
  }));
  const judgedPairs: JudgedPair[] = judgments.flatMap((row) =>
    row.outcome === null
      ? []
      : [
          {
            task: row.task,
            condition: row.condition,
            replicate: row.replicate,
            candidate: row.candidate,
            baseline: row.baseline,
            judge: row.judge,
            seed: row.seed,
            order: row.order,
            outcome: row.outcome,
          },
        ],
  );
  const figures = computeEvaluationFigures(
    {
      judgments: judgedPairs,
      rollouts,
      selectedRuns: outside.selectedRuns,
      agreementSamples: outside.agreementSamples,
      tasksWithoutGrader,
    },
    {
      comparisons,
      // An evaluation of the searches alone has no model: its figures have no reference to measure against.
      reference: plan.models[0]?.name ?? 'L0',
      tieMargin: evaluation.oracleTieMargin,
      bootstrapSeed: evaluation.seed ?? options.run.config.seed,
      pooledJudges: plan.judges.map((judge) => judge.name),
    },
  );
  return {
    run: options.run.name,
    name: evaluation.name,
    settings: { ...evaluation },
    models: plan.models.map((model) => ({
      name: model.name,
      servedAs: model.servedAs,
      parent: model.parent,
      standIn: options.standIns.get(model.name) ?? null,
    })),
    judges: options.served,
    tasks,
    conditions,
    comparisons,
    transfer: transfers.map(transferRecord),
    counts: {
      episodes: episodes.length,
      failedEpisodes: episodes.filter((episode) => episode.status !== 'success').length,
      judgments: everyJudgment.length,
      repairedJudgments: everyJudgment.filter((row) => row.status === 'ok' && row.repairs > 0).length,
      failedJudgments: everyJudgment.filter((row) => row.status === 'failed').length,
      grades: everyGrade.length,
      failedGrades: everyGrade.filter((row) => row.grade === null).length,
    },
    figures,
    inputs: {
      judgedPairs,
      rollouts,
      selectedRuns: outside.selectedRuns,
      agreementSamples: outside.agreementSamples,
      tasksWithoutGrader,
    },
  };
}
