import { dataSeeds } from '../config/data-seeds.js';
import type { SpendStage } from '../config/prices.js';
import { episodeSettings } from '../episode/episode-settings.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import { JsonlAppender } from '../proxy/jsonl-appender.js';
import { TaskSearchRecord } from '../records/search-records.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { RunSession } from '../session/run-session.js';
import type { ModelRegistry } from '../records/registry.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { recordWorkPlan } from '../store/work-plan.js';
import { evaluationBase } from '../work/step-keys.js';
import { runStudy, WorkRunner } from '../work/work-runner.js';
import { judgmentsPerStep } from './evaluation-judgments.js';
import { evaluationPairs } from './evaluation-pairs.js';
import { evaluationPlan, type EvaluationPlan } from './evaluation-plan.js';
import { EvaluationSummaryRecord, type EvaluationSummary } from '../records/evaluation-records.js';
import { EvaluationSpending } from './evaluation-spending.js';
import { noLoopMeasures, summariseEvaluation } from './evaluation-summary.js';
import { serveEvaluation } from './serve-evaluation.js';
import { evaluationPath, searchResultPath } from '../store/run-paths.js';
import { loopOutsideMeasures } from './loop-outside-measures.js';
import { describeSearchCoveragePlan, planSearchCoverage, searchCoverageStudy } from './search-coverage.js';
import {
  describeTransferPlan,
  planTransfers,
  searchRecordsOf,
  type TransferComparison,
} from './transfer-plan.js';
import { workspaceBundles } from './workspace-bundles.js';

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
  /** The stage its spending is journaled and budgeted under (default `evaluation`; `mass students`: `students`). */
  stage?: SpendStage;
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
  const base = evaluationBase(evaluation.name);
  const report = options.onProgress ?? (() => {});
  const registry = await session.registry();
  const suite = await session.suite();
  const plan = await evaluationPlan({ config, evaluation, registry, suite });
  const seeds = dataSeeds(config);
  const workflows = await championDesigns(run, registry, plan.tasks, evaluation.conditions);
  const transfers = await plannedTransfers(run, evaluation, plan, suite);
  const coverage = await planSearchCoverage({ run, evaluation, judges: plan.judges, suite });
  if (coverage) report({ kind: 'note', text: describeSearchCoveragePlan(coverage, plan.judges.length) });
  for (const transfer of transfers) report({ kind: 'note', text: describeTransferPlan(transfer) });
  const bundleOf = workspaceBundles(await session.tokenCounter());
  const spending = await EvaluationSpending.open(run, config, evaluation.name, options.stage);
  const served = spending.served(
    await serveEvaluation(config, session.kind.host, plan.models, plan.judges, {
      selfJudge: evaluation.selfJudge,
      registry,
    }),
  );
  const pools = session.endpointPools(run.path(evaluationPath(evaluation.name, 'outages')));
  const grades = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'grades')));
  const judgments = new JsonlAppender(run.path(evaluationPath(evaluation.name, 'judgments')));
  try {
    const perStep = judgmentsPerStep(evaluation.orders);
    let pairGrades = 0;
    const pairs = await runStudy(
      evaluationPairs({
        run,
        base,
        evaluation,
        plan,
        served,
        workflows,
        transfers,
        settings: episodeSettings(config),
        seeds,
        episodes: {
          episodes: spending.episodes(session.episodes, plan.models),
          concurrency: evaluation.concurrency.episodes,
        },
        grades,
        judgments,
        bundleOf,
        onPlanned: async (work) => {
          pairGrades = work.planned('grade');
          await recordWorkPlan(run.directory, base, {
            episode: work.planned('episode'),
            grade: work.planned('grade'),
            judgment: work.planned('judgment'),
          });
          report({
            kind: 'planned',
            episodes: work.planned('episode'),
            grades: work.planned('grade'),
            judgments: work.planned('judgment') * perStep,
          });
        },
      }),
      new WorkRunner(run, pools, {
        beforeWork: (kind) => spending.beforeWork(kind),
        onFinished: (what) => {
          if (what === 'episode' || what === 'grade' || what === 'judgment') {
            report({ kind: 'finished', what, ...(what === 'judgment' ? { count: perStep } : {}) });
          }
        },
      }),
    );
    // A transfer-only evaluation compares no generations: their loops' records are not measured.
    const measuresLoops = plan.comparisons.length > 0;
    if (measuresLoops) report({ kind: 'loop-records' });
    const [outside, searchCoverage] = await Promise.all([
      measuresLoops
        ? runStudy(
            loopOutsideMeasures({
              run,
              suite,
              registry,
              plan,
              evaluation,
              served,
              base,
              seeds,
              grades,
              judgments,
              bundleOf,
              // The loops' runs are graded beside the pairs' episodes, and their matches judged under `tournament/`.
              onPlanned: (work) =>
                recordWorkPlan(run.directory, base, {
                  grade: pairGrades + work.planned('grade'),
                  tournament: work.planned('judgment'),
                }),
            }),
            new WorkRunner(run, pools, { beforeWork: (kind) => spending.beforeWork(kind) }),
          )
        : noLoopMeasures(),
      coverage &&
        runStudy(
          searchCoverageStudy(coverage, {
            run,
            base,
            judges: served.judges,
            repairAttempts: evaluation.judgeRepairAttempts,
            concurrency: evaluation.concurrency.judgments,
            judgments,
            bundleOf,
          }),
          new WorkRunner(run, pools, { beforeWork: (kind) => spending.beforeWork(kind) }),
        ),
    ]);
    const summary = summariseEvaluation({
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
      ...pairs,
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
    summary.spending = spending.summary();
    await EvaluationSummaryRecord.write(run.path(evaluationPath(evaluation.name, 'summary')), summary);
    return summary;
  } finally {
    await Promise.allSettled([grades.close(), judgments.close(), pools.close()]);
    await served.close();
  }
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
