import { availableParallelism } from 'node:os';

import { dataSeeds, taskDataSeed } from '../config/data-seeds.js';
import { episodeSettings } from '../episode/episode-settings.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import { buildWorkspaceBundle, type WorkspaceBundle } from '../judge/bundle.js';
import { Semaphore } from '../model/concurrency.js';
import { JsonlAppender } from '../proxy/jsonl-appender.js';
import { TaskSearchRecord } from '../search/search-records.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { RunSession } from '../session/run-session.js';
import type { ModelRegistry } from '../train/registry.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { UserError } from '../errors.js';
import { evaluationEpisodeStep, gradeStep, type EvaluationEpisodeRunner } from './evaluation-episodes.js';
import { judgmentStep, judgmentsPerStep, type JudgedEpisodes } from './evaluation-judgments.js';
import { evaluationPlan, type EvaluationPlan } from './evaluation-plan.js';
import {
  EvaluationSummaryRecord,
  type EvaluationCondition,
  type EvaluationEpisode,
  type EvaluationSummary,
  type GradeRow,
  type JudgmentRow,
} from './evaluation-records.js';
import { serveEvaluation, type ServedJudge } from './serve-evaluation.js';
import { evaluationPath, searchResultPath } from '../store/run-paths.js';
import { computeEvaluationFigures, type GradedRollout, type JudgedPair } from './statistics/index.js';
import { loopOutsideMeasures, type LoopOutsideMeasures } from './loop-outside-measures.js';
import { describeSearchCoveragePlan, judgeSearchCoverage, planSearchCoverage } from './search-coverage.js';
import {
  describeTransferPlan,
  planTransfers,
  searchRecordsOf,
  transferRecord,
  TRANSFER_CONDITION,
  type TransferComparison,
  type TransferDesign,
} from './transfer-plan.js';
import { judgeSeeds } from '../config/judge-orders.js';

export type EvaluationProgress =
  /** `judgments`: rows of `judgments.jsonl`, one per judge, seed, pair and order judged. */
  | { kind: 'planned'; episodes: number; grades: number; judgments: number }
  /** `count`: how many it finished at once (a judgment step judges one or both orders); default 1. */
  | { kind: 'finished'; what: 'episode' | 'grade' | 'judgment'; count?: number }
  /** What the evaluation will run, said before it starts (which tasks and designs a workflow transfer uses). */
  | { kind: 'note'; text: string }
  /** The evaluation's own pairs are done; the loop's collections and tournament samples come next. */
  | { kind: 'loop-records' };

export interface EvaluateRunOptions {
  /** The run's session: its configuration, suite, model kind, registry, episode back-end and endpoint pools. */
  session: RunSession;
  /** The evaluation section, defaults filled in and the command line's changes applied. */
  evaluation: EvaluationConfig;
  onProgress?: (event: EvaluationProgress) => void;
}

/**
 * An evaluation of a run's generations (or of named endpoints) on held-out tasks, by two outside measures: external
 * judges, each judging every pair of episodes with every seed in both A/B orders (or in one drawn per pair, judge and
 * seed: `orders: random`), and the task's withheld grader. Workflow transfers (`evaluation.transfer`, the paper's
 * Table 2) add pairs of one executor running two generations' searched designs, in the `transfer` condition.
 * Everything lands in `evaluation/<name>/` and every episode, grade and judgment is a step, so a killed evaluation
 * resumes without redoing any of them. Episodes, grades and judgments run as soon as what they need is there, each
 * kind under its own limits (episodes per model endpoint, judge calls per judge).
 *
 * No loop stage reads `evaluation/`, and no loop request carries an evaluation judge's model: the loop never learns
 * from these measures.
 */
export async function evaluateRun(options: EvaluateRunOptions): Promise<EvaluationSummary> {
  const { session, evaluation } = options;
  const { run, config } = session;
  const base = evaluationPath(evaluation.name);
  const report = options.onProgress ?? (() => {});
  const registry = await session.registry();
  const suite = await session.suite();
  const plan = await evaluationPlan({ config, evaluation, registry, suite });
  const seeds = dataSeeds(config);
  const samplingSeed = evaluation.seed ?? config.seed;
  const workflows = await championDesigns(run, registry, plan.tasks, evaluation.conditions);
  const transfers = await plannedTransfers(run, evaluation, plan, suite);
  const coverage = await planSearchCoverage({
    run,
    evaluation,
    judges: plan.judges,
    suite,
  });
  if (coverage) report({ kind: 'note', text: describeSearchCoveragePlan(coverage, plan.judges.length) });
  for (const transfer of transfers) report({ kind: 'note', text: describeTransferPlan(transfer) });
  const tokenCounter = await session.tokenCounter();
  const settings = episodeSettings(config);
  const served = await serveEvaluation(config, session.kind.host, plan.models, plan.judges, {
    selfJudge: evaluation.selfJudge,
    registry,
  });
  const pools = session.endpointPools(run.path(evaluationPath(evaluation.name, 'outages')));
  const runner: EvaluationEpisodeRunner = {
    episodes: session.episodes,
    outagesOf: (model) => pools.gate(model),
  };
  const grades = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'grades')));
  const judgments = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'judgments')));
  try {
    const slotsFor = (baseUrl: string) => pools.slots('episodes', baseUrl, evaluation.concurrency.episodes);
    const gradeSlots = new Semaphore(Math.max(1, availableParallelism()));
    const judgeSlots = new Map(
      [...served.judges, ...served.selfJudges.values()].map((judge) => [
        judge.name,
        pools.slots('judgments', judge.name, evaluation.concurrency.judgments),
      ]),
    );

    const episodes = new Map<string, Promise<EvaluationEpisode>>();
    const gradeRows: Array<Promise<GradeRow>> = [];
    const bundles = new Map<string, Promise<WorkspaceBundle>>();
    /** A side's episode of one task and replicate: run once, however many pairs it belongs to. */
    const episodeOf = (side: EpisodeSide, task: LoadedTask, replicate: number) => {
      const key = `${side.label}\u0000${task.manifest.id}\u0000${side.condition}\u0000${replicate}`;
      let episode = episodes.get(key);
      if (!episode) {
        const servedModel = served.models.get(side.model)!;
        episode = (async () => {
          const release = await slotsFor(servedModel.baseUrl).acquire();
          let finished: EvaluationEpisode;
          try {
            finished = await evaluationEpisodeStep(
              run,
              base,
              {
                model: servedModel,
                label: side.label,
                task,
                condition: side.condition,
                workflow: side.workflow,
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
          if (side.designHash !== undefined) assertRanDesign(finished, side.designHash);
          return finished;
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
    const perStep = judgmentsPerStep(evaluation.orders);
    /** Every judge with every seed on one pair, in the configured orders, as soon as both episodes are there. */
    const judgeEpisodes = (pair: {
      candidate: EpisodeSide;
      baseline: EpisodeSide;
      task: LoadedTask;
      replicate: number;
      judges: readonly ServedJudge[];
    }) => {
      const { candidate, baseline, task, replicate } = pair;
      const condition = candidate.condition;
      const both = Promise.all([episodeOf(candidate, task, replicate), episodeOf(baseline, task, replicate)]);
      for (const judge of pair.judges) {
        for (const seed of judgeSeeds(evaluation.orders, evaluation.judgeSeeds)) {
          judged.push(
            both.then(async ([first, second]) => {
              const judgedEpisodes: JudgedEpisodes = {
                sample: 'evaluation',
                task,
                condition,
                replicate,
                candidate: {
                  label: candidate.label,
                  episodeId: first.episodeId,
                  bundle: () => bundleOf(task, first),
                },
                baseline: {
                  label: baseline.label,
                  episodeId: second.episodeId,
                  bundle: () => bundleOf(task, second),
                },
              };
              try {
                return await judgmentStep({
                  run,
                  key: `${base}/judgment/${candidate.label}-vs-${baseline.label}/${task.manifest.id}/${condition}/${replicate}/${judge.name}/${seed}`,
                  pair: judgedEpisodes,
                  judge,
                  seed,
                  orders: evaluation.orders,
                  repairAttempts: evaluation.judgeRepairAttempts,
                  slots: judgeSlots.get(judge.name)!,
                  judgments,
                });
              } finally {
                report({ kind: 'finished', what: 'judgment', count: perStep });
              }
            }),
          );
        }
      }
    };

    const modelSide = (model: string, task: LoadedTask, condition: EvaluationCondition): EpisodeSide => ({
      label: model,
      model,
      condition,
      workflow: condition === 'workflow' ? workflows.get(task.manifest.id) : undefined,
    });
    for (const { candidate, baseline } of plan.comparisons) {
      for (const task of plan.tasks) {
        for (const condition of evaluation.conditions) {
          for (let replicate = 0; replicate < evaluation.rollouts; replicate++) {
            const selfJudge = served.selfJudges.get(candidate);
            judgeEpisodes({
              candidate: modelSide(candidate, task, condition),
              baseline: modelSide(baseline, task, condition),
              task,
              replicate,
              judges: [...served.judges, ...(selfJudge ? [selfJudge] : [])],
            });
          }
        }
      }
    }
    // The workflow transfers: one executor on both sides, each side with its generation's champion design. Judged by
    // the external judges alone: the self-judge measures a generation judging itself against another.
    for (const transfer of transfers) {
      for (const { task, candidate, baseline } of transfer.tasks) {
        for (let replicate = 0; replicate < evaluation.rollouts; replicate++) {
          judgeEpisodes({
            candidate: transferSide(transfer.candidate, transfer.executor, candidate),
            baseline: transferSide(transfer.baseline, transfer.executor, baseline),
            task,
            replicate,
            judges: served.judges,
          });
        }
      }
    }
    report({
      kind: 'planned',
      episodes: episodes.size,
      grades: gradeRows.length,
      judgments: judged.length * perStep,
    });
    const episodeList = await settleAll([...episodes.values()]);
    const gradeList = await settleAll(gradeRows);
    const judgmentList = (await settleAll(judged)).flat();
    // A transfer-only evaluation compares no generations: their loops' records are not measured.
    const measuresLoops = plan.comparisons.length > 0;
    if (measuresLoops) report({ kind: 'loop-records' });
    const outside = !measuresLoops
      ? noLoopMeasures()
      : await loopOutsideMeasures({
          run,
          suite,
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
    const searchCoverage =
      coverage &&
      (await judgeSearchCoverage(coverage, {
        run,
        base,
        judges: served.judges,
        repairAttempts: evaluation.judgeRepairAttempts,
        tokenCounter,
        judgments,
        judgeSlots,
      }));
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
      transfers,
      tasksWithoutGrader: [
        ...[...plan.tasks, ...transfers.flatMap((transfer) => transfer.tasks.map(({ task }) => task))]
          .filter((task) => !hasGrader(task))
          .map((task) => task.manifest.id),
        ...outside.tasksWithoutGrader,
      ],
    });
    if (searchCoverage) summary.searchCoverage = searchCoverage;
    await EvaluationSummaryRecord.write(run.path(evaluationPath(evaluation.name, 'summary')), summary);
    return summary;
  } finally {
    await Promise.allSettled([grades.close(), judgments.close(), pools.close()]);
    await served.close();
  }
}

/** Waits for every piece of work, so none is still writing when the run closes; then throws the first failure. */
export async function settleAll<T>(work: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

/** The episodes of one side of a pair: who runs them, under which label and condition, with which design. */
interface EpisodeSide {
  /** The name its records carry: the model's, or a transfer side's label. */
  label: string;
  /** The evaluated model that runs it. */
  model: string;
  condition: EvaluationCondition;
  /** The design rendered into the prompt; none: the bare task. */
  workflow?: TeamDesign;
  /** A transfer side's: the hash of the design its plan gives it (null: bare), checked against what ran. */
  designHash?: string | null;
}

function transferSide(label: string, executor: string, design: TransferDesign): EpisodeSide {
  return {
    label,
    model: executor,
    condition: TRANSFER_CONDITION,
    workflow: design.design ?? undefined,
    designHash: design.designHash,
  };
}

/**
 * A finished transfer episode must have run the design its side is planned with now. It would not when the
 * generation's search went on after the episode (a new champion): the figures would then mix two designs under one
 * label, so that is refused rather than measured.
 */
function assertRanDesign(episode: EvaluationEpisode, designHash: string | null): void {
  if (episode.workflowHash === undefined || episode.workflowHash === designHash) return;
  throw new UserError(
    `evaluation.transfer: ${episode.dir} ran design ${episode.workflowHash ?? 'none (the bare task)'}, but its side's ` +
      `search champion is now ${designHash ?? 'the bare task'} (the search went on since): give evaluation.name ` +
      `another name to evaluate the new designs`,
  );
}

/** The transfers of `evaluation.transfer`, planned from the run's search records (none when there are none). */
async function plannedTransfers(
  run: Run<RunConfig>,
  evaluation: EvaluationConfig,
  plan: EvaluationPlan,
  suite: LoadedSuite,
): Promise<TransferComparison[]> {
  if (evaluation.transfer.length === 0) return [];
  return planTransfers({
    entries: evaluation.transfer,
    models: plan.models.map((model) => model.name),
    suiteTasks: suite.tasks,
    ...(evaluation.tasks ? { taskIds: evaluation.tasks } : {}),
    searches: searchRecordsOf((...segments) => run.path(...segments)),
  });
}

function noLoopMeasures(): LoopOutsideMeasures {
  return { selectedRuns: [], agreementSamples: [], judgments: [], grades: [], tasksWithoutGrader: [] };
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
