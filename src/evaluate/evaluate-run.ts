import { availableParallelism } from 'node:os';

import { dataSeeds, taskDataSeed } from '../config/data-seeds.js';
import { episodeSettings } from '../config/episode-settings.js';
import { outageSettings } from '../config/fault-tolerance.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import { buildWorkspaceBundle, type WorkspaceBundle } from '../judge/bundle.js';
import { Semaphore } from '../model/concurrency.js';
import { loadTokenCounter } from '../model/token-counter.js';
import { JsonlAppender } from '../proxy/jsonl-appender.js';
import { localEpisodeBackend, type EpisodeBackend } from '../queue/episode-backend.js';
import { outageGateFor, type OutageGate } from '../search/outage-gate.js';
import { TaskSearchRecord } from '../search/search-records.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { ModelRegistry } from '../train/registry.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { evaluationEpisodeStep, gradeStep, type EvaluationEpisodeRunner } from './evaluation-episodes.js';
import { judgmentStep, type JudgedEpisodes } from './evaluation-judgments.js';
import { evaluationPlan, type EvaluationPlan } from './evaluation-plan.js';
import {
  EvaluationSummaryRecord,
  type EvaluationEpisode,
  type EvaluationSummary,
  type GradeRow,
  type JudgmentRow,
} from './evaluation-records.js';
import { serveEvaluation } from './serve-evaluation.js';
import { modelKind } from '../hosting/model-kind.js';
import { evaluationPath, searchResultPath } from '../store/run-paths.js';
import { computeEvaluationFigures, type GradedRollout, type JudgedPair } from './statistics/index.js';
import { loopOutsideMeasures } from './loop-outside-measures.js';

export type EvaluationProgress =
  | { kind: 'planned'; episodes: number; grades: number; judgments: number }
  | { kind: 'finished'; what: 'episode' | 'grade' | 'judgment' }
  /** The evaluation's own pairs are done; the loop's collections and tournament samples come next. */
  | { kind: 'loop-records' };

export interface EvaluateRunOptions {
  run: Run<RunConfig>;
  /** The configuration's suite folder, resolved. */
  suiteDir: string;
  /** The evaluation section, defaults filled in and the command line's changes applied. */
  evaluation: EvaluationConfig;
  onProgress?: (event: EvaluationProgress) => void;
  /** Where the episodes run (default: in this process); the configuration's `execution` back-end. */
  episodes?: EpisodeBackend;
}

/**
 * An evaluation of a run's generations (or of named endpoints) on held-out tasks, by two outside measures: external
 * judges, each judging every pair of episodes with every seed in both A/B orders, and the task's withheld grader.
 * Everything lands in `evaluation/<name>/` and every episode, grade and judgment is a step, so a killed evaluation
 * resumes without redoing any of them. Episodes, grades and judgments run as soon as what they need is there, each
 * kind under its own limits (episodes per model endpoint, judge calls per judge).
 *
 * No loop stage reads `evaluation/`, and no loop request carries an evaluation judge's model: the loop never learns
 * from these measures.
 */
export async function evaluateRun(options: EvaluateRunOptions): Promise<EvaluationSummary> {
  const { run, evaluation } = options;
  const { config } = run;
  const base = evaluationPath(evaluation.name);
  const report = options.onProgress ?? (() => {});
  const registry = await ModelRegistry.open(run.directory);
  const plan = await evaluationPlan({ config, evaluation, registry, suiteDir: options.suiteDir });
  const seeds = dataSeeds(config);
  const samplingSeed = evaluation.seed ?? config.seed;
  const workflows = await championDesigns(run, registry, plan.tasks, evaluation.conditions);
  const tokenCounter = await loadTokenCounter();
  const settings = episodeSettings(config);
  const served = await serveEvaluation(config, modelKind(config).host, plan.models, plan.judges, {
    selfJudge: evaluation.selfJudge,
    registry,
  });
  const outageGates = new Map<string, OutageGate>();
  const runner: EvaluationEpisodeRunner = {
    episodes: options.episodes ?? localEpisodeBackend,
    outagesOf: (model) => {
      let gate = outageGates.get(model.baseUrl);
      if (!gate) {
        gate = outageGateFor(
          model,
          outageSettings(config),
          run.path(evaluationPath(evaluation.name, 'outages')),
        );
        outageGates.set(model.baseUrl, gate);
      }
      return gate;
    },
  };
  const grades = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'grades')));
  const judgments = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'judgments')));
  try {
    const episodeSlots = new Map<string, Semaphore>();
    const slotsFor = (baseUrl: string) => {
      let slots = episodeSlots.get(baseUrl);
      if (!slots) episodeSlots.set(baseUrl, (slots = new Semaphore(evaluation.concurrency.episodes)));
      return slots;
    };
    const gradeSlots = new Semaphore(Math.max(1, availableParallelism()));
    const judgeSlots = new Map(
      [...served.judges, ...served.selfJudges.values()].map((judge) => [
        judge.name,
        new Semaphore(evaluation.concurrency.judgments),
      ]),
    );

    const episodes = new Map<string, Promise<EvaluationEpisode>>();
    const gradeRows: Array<Promise<GradeRow>> = [];
    const bundles = new Map<string, Promise<WorkspaceBundle>>();
    const episodeOf = (
      model: string,
      task: LoadedTask,
      condition: EvaluationConfig['conditions'][number],
      replicate: number,
    ) => {
      const key = `${model}\u0000${task.manifest.id}\u0000${condition}\u0000${replicate}`;
      let episode = episodes.get(key);
      if (!episode) {
        const servedModel = served.models.get(model)!;
        episode = (async () => {
          const release = await slotsFor(servedModel.baseUrl).acquire();
          try {
            return await evaluationEpisodeStep(
              run,
              base,
              {
                model: servedModel,
                task,
                condition,
                workflow: condition === 'workflow' ? workflows.get(task.manifest.id) : undefined,
                replicate,
                samplingSeed: samplingSeed + replicate,
                dataSeed: taskDataSeed(seeds, task.manifest.id),
              },
              settings,
              runner,
            );
          } finally {
            release();
            report({ kind: 'finished', what: 'episode' });
          }
        })();
        episodes.set(key, episode);
        // A task without a grader is measured by the judges alone; the summary says so (figures.grading).
        if (hasGrader(task)) {
          gradeRows.push(
            episode.then(async (finished) => {
              const release = await gradeSlots.acquire();
              try {
                return await gradeStep(run, base, { ...finished, task }, grades);
              } finally {
                release();
                report({ kind: 'finished', what: 'grade' });
              }
            }),
          );
        }
      }
      return episode;
    };
    const bundleOf = (task: LoadedTask, episode: EvaluationEpisode) => {
      let bundle = bundles.get(episode.episodeId);
      if (!bundle) {
        bundle = buildWorkspaceBundle({ task, location: run.path(episode.dir), tokenCounter });
        bundles.set(episode.episodeId, bundle);
      }
      return bundle;
    };

    const judged: Array<Promise<JudgmentRow[]>> = [];
    for (const { candidate, baseline } of plan.comparisons) {
      for (const task of plan.tasks) {
        for (const condition of evaluation.conditions) {
          for (let replicate = 0; replicate < evaluation.rollouts; replicate++) {
            const pair = Promise.all([
              episodeOf(candidate, task, condition, replicate),
              episodeOf(baseline, task, condition, replicate),
            ]);
            const selfJudge = served.selfJudges.get(candidate);
            for (const judge of [...served.judges, ...(selfJudge ? [selfJudge] : [])]) {
              for (let seed = 0; seed < evaluation.judgeSeeds; seed++) {
                judged.push(
                  pair.then(async ([first, second]) => {
                    const judgedEpisodes: JudgedEpisodes = {
                      sample: 'evaluation',
                      task,
                      condition,
                      replicate,
                      candidate: {
                        label: candidate,
                        episodeId: first.episodeId,
                        bundle: () => bundleOf(task, first),
                      },
                      baseline: {
                        label: baseline,
                        episodeId: second.episodeId,
                        bundle: () => bundleOf(task, second),
                      },
                    };
                    try {
                      return await judgmentStep({
                        run,
                        key: `${base}/judgment/${candidate}-vs-${baseline}/${task.manifest.id}/${condition}/${replicate}/${judge.name}/${seed}`,
                        pair: judgedEpisodes,
                        judge,
                        seed,
                        repairAttempts: evaluation.judgeRepairAttempts,
                        slots: judgeSlots.get(judge.name)!,
                        judgments,
                      });
                    } finally {
                      report({ kind: 'finished', what: 'judgment' });
                    }
                  }),
                );
              }
            }
          }
        }
      }
    }
    report({
      kind: 'planned',
      episodes: episodes.size,
      grades: gradeRows.length,
      judgments: judged.length,
    });
    const episodeList = await settleAll([...episodes.values()]);
    const gradeList = await settleAll(gradeRows);
    const judgmentList = (await settleAll(judged)).flat();
    report({ kind: 'loop-records' });
    const outside = await loopOutsideMeasures({
      run,
      suiteDir: options.suiteDir,
      registry,
      plan,
      evaluation,
      served,
      base,
      tokenCounter,
      seeds,
      grades,
      judgments,
      gradeSlots,
      judgeSlots,
    });
    const summary = summarise({
      run,
      evaluation,
      plan,
      standIns: new Map([...served.models.values()].map((model) => [model.name, model.standIn])),
      served: [
        ...served.judges,
        ...plan.models.flatMap((model) => {
          const judge = served.selfJudges.get(model.name);
          return judge && plan.comparisons.some((comparison) => comparison.candidate === model.name)
            ? [judge]
            : [];
        }),
      ].map((judge) => ({
        name: judge.name,
        model: judge.modelName,
        standIn: judge.standIn,
      })),
      episodes: episodeList,
      grades: gradeList,
      judgments: judgmentList,
      outside,
      tasksWithoutGrader: [
        ...plan.tasks.filter((task) => !hasGrader(task)).map((task) => task.manifest.id),
        ...outside.tasksWithoutGrader,
      ],
    });
    await EvaluationSummaryRecord.write(run.path(evaluationPath(evaluation.name, 'summary')), summary);
    return summary;
  } finally {
    await Promise.allSettled([
      grades.close(),
      judgments.close(),
      ...[...outageGates.values()].map((gate) => gate.close()),
    ]);
    await served.close();
  }
}

/** Waits for every piece of work, so none is still writing when the run closes; then throws the first failure. */
async function settleAll<T>(work: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

/**
 * The design of the `workflow` condition: the task's champion from the latest search of it in this run, else the
 * task's own design (held-out tasks are never searched by the loop). Every model runs the same design.
 */
async function championDesigns(
  run: Run<RunConfig>,
  registry: ModelRegistry,
  tasks: readonly LoadedTask[],
  conditions: readonly string[],
): Promise<Map<string, TeamDesign>> {
  const designs = new Map<string, TeamDesign>();
  if (!conditions.includes('workflow')) return designs;
  for (const task of tasks) {
    let design: TeamDesign = task.manifest.workflow;
    for (const generation of registry.list().reverse()) {
      const result = await TaskSearchRecord.readIfPresent(
        run.path(searchResultPath(generation.name, task.manifest.id)),
      );
      if (result?.championDesign) {
        design = result.championDesign;
        break;
      }
    }
    designs.set(task.manifest.id, design);
  }
  return designs;
}

function summarise(options: {
  run: Run<RunConfig>;
  evaluation: EvaluationConfig;
  plan: EvaluationPlan;
  /** Each model's stand-in label (`ServedModel.standIn`). */
  standIns: ReadonlyMap<string, string | null>;
  served: EvaluationSummary['judges'];
  episodes: EvaluationEpisode[];
  grades: GradeRow[];
  judgments: JudgmentRow[];
  outside: Awaited<ReturnType<typeof loopOutsideMeasures>>;
  /** Tasks of the evaluation or of the loop's collections whose task.yaml names no grader. */
  tasksWithoutGrader: readonly string[];
}): EvaluationSummary {
  const tasksWithoutGrader = [...new Set(options.tasksWithoutGrader)].sort();
  const { evaluation, plan, episodes, grades, judgments, outside } = options;
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
      comparisons: plan.comparisons,
      reference: plan.models[0]!.name,
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
    tasks: plan.tasks.map((task) => task.manifest.id),
    conditions: evaluation.conditions,
    comparisons: plan.comparisons,
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
