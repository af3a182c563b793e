import type { RunConfig } from '../config/run-config.js';
import { evaluationConfig } from '../config/run-config.js';
import { isBuiltInToy } from '../hosting/model-kind.js';
import { searchTaskDirs } from '../search/search-config.js';
import { loadSuite } from '../tasks/load-suite.js';
import { resolveHyperparameters, type TrainingHyperparameters } from '../train/hyperparameters.js';
import { evaluationWork, plannedGenerations, type PlannedGeneration } from './evaluation-work.js';
import { collectionWork, searchWork, tournamentWork } from './loop-work.js';
import type { PlanThroughput } from './doctor-throughput.js';
import type { MeasuredRun } from './measured-run.js';
import { emptyStage, stageTotals, type Figure, type StageWork } from './plan-types.js';
import { roleTokens, type RoleTokens } from './role-tokens.js';
import { stageSeconds } from './stage-time.js';
import { unitFigures } from './unit-figures.js';

/** A stage of the plan with its wall time (null when nothing it rests on is known). */
export interface PlannedStage extends StageWork {
  seconds: Figure | null;
}

export interface RunPlan {
  name: string;
  rounds: number;
  /** The loop's tasks and the evaluation's. */
  tasks: number;
  evaluationTasks: number;
  stages: PlannedStage[];
  totals: ReturnType<typeof stageTotals>;
  roles: RoleTokens[];
  training: { steps: number; windowsPerStep: number; basis: string; memory: string };
  disk: Figure;
  /** The stages' times summed; `missing` names the stages it leaves out. */
  time: { seconds: number; basis: string; missing: string[] };
  /** The throughput the times rest on, when `mass doctor` measured it; null: assumed, or `--like`'s measurements. */
  throughput: PlanThroughput | null;
  like: MeasuredRun | null;
  /** What the counts after each search assume of its outcome. */
  outcome: string;
}

export interface PlanOptions {
  config: RunConfig;
  /** The suite folder, resolved. */
  suiteDir: string;
  rounds: number;
  /** `loop`: what `mass rsi` runs; `evaluation`: what `mass eval` runs; `all`: both, the evaluation when configured. */
  scope: 'all' | 'loop' | 'evaluation';
  like?: MeasuredRun | null;
  /** `mass doctor`'s output tokens per second at the configured concurrency (its record, or `--throughput`). */
  throughput?: PlanThroughput | null;
  /** Why no throughput was measured or usable, for the assumed figure's basis. */
  throughputNote?: string | null;
  /**
   * Per round, the tasks whose search beats its reference: only they are collected and ranked, and their tournaments
   * sampled by the evaluation. Default: every task (the most); a run's own outcome once known.
   */
  winning?: readonly number[];
  /**
   * The generations an evaluation compares and each one's tasks distilled, when the run has them (`mass eval` on a
   * run): default the loop's L0 … L<rounds>, every round with `winning` tasks.
   */
  evaluated?: { generations: PlannedGeneration[]; distilledTasks: (generation: string) => number };
}

/**
 * What a configuration will do, before anything runs: each generation's search, collection, tournament and training,
 * then the evaluation; every count from the functions that mirror how the stages plan (`loop-work.ts`,
 * `evaluation-work.ts`), tokens and time from a finished run's means or the budgets, each figure with its basis.
 */
export async function planRun(options: PlanOptions): Promise<RunPlan> {
  const { config, rounds, scope } = options;
  const like = options.like ?? null;
  const tasks = (await searchTaskDirs(options.suiteDir, config.tasks)).length;
  const throughput = options.throughput ?? null;
  const units = unitFigures(config, like, throughput, options.throughputNote ?? null);
  const training = trainingFigures(config, like);
  const winning = (round: number) => Math.min(tasks, options.winning?.[round] ?? tasks);
  const stages: StageWork[] = [];
  if (scope !== 'evaluation') {
    for (const [round, { name }] of plannedGenerations(rounds).slice(0, rounds).entries()) {
      stages.push(
        searchWork(config, tasks, name),
        collectionWork(config, winning(round), name),
        tournamentWork(config, winning(round), name),
        emptyStage('training', name),
      );
    }
  }
  let evaluationTasks = 0;
  if (scope !== 'loop' && (config.evaluation || scope === 'evaluation')) {
    const evaluation = evaluationConfig(config);
    evaluationTasks = evaluation.tasks?.length ?? (await testTasks(options.suiteDir));
    stages.push(
      evaluationWork({
        config,
        evaluation,
        evaluationTasks,
        ...(options.evaluated ?? {
          generations: plannedGenerations(rounds),
          distilledTasks: (generation: string) => winning(Number(generation.slice(1))),
        }),
      }),
    );
  }
  const planned = stages.map((stage) => ({
    ...stage,
    seconds: stageSeconds(config, stage, units, training.steps),
  }));
  const totals = stageTotals(planned);
  const known = planned.filter((stage) => stage.seconds !== null);
  return {
    name: config.name,
    rounds,
    tasks,
    evaluationTasks,
    stages: planned,
    totals,
    roles: roleTokens(config, planned, units),
    training,
    disk: {
      value: totals.episodes.count * units.episode.bytes.value,
      basis: units.episode.bytes.basis,
    },
    time: {
      seconds: known.reduce((sum, stage) => sum + stage.seconds!.value, 0),
      basis: [...new Set(known.map((stage) => stage.seconds!.basis))].join('; '),
      missing: planned
        .filter((stage) => stage.seconds === null)
        .map((stage) => `${stage.stage}${stage.generation ? ` ${stage.generation}` : ''}`),
    },
    throughput: like ? null : throughput,
    like,
    outcome: options.winning
      ? `searches beating their reference, per round: ${plannedGenerations(rounds)
          .slice(0, rounds)
          .map((generation, round) => `${generation.name} ${winning(round)} of ${tasks}`)
          .join(', ')} (given)`
      : `every search beats its reference: the most work; a task whose search does not is not collected, ranked or sampled`,
  };
}

/** Steps per training, windows per step, and what the GPU memory figure rests on. */
function trainingFigures(config: RunConfig, like: MeasuredRun | null): RunPlan['training'] {
  if (isBuiltInToy(config)) {
    return {
      steps: 1,
      windowsPerStep: 0,
      basis: 'configuration (the toy trainer makes one step)',
      memory: 'none: the toy model trains on the CPU',
    };
  }
  const hyper: TrainingHyperparameters = resolveHyperparameters(
    config.rsi.hyperparameters as Partial<TrainingHyperparameters> | undefined,
  );
  const measured = like?.training;
  return {
    steps: hyper.steps,
    windowsPerStep: hyper.batchSize,
    basis: 'configuration (rsi.hyperparameters)',
    memory:
      `the memory planner needs the training data and torch: run \`mass train --plan\` on a round's data` +
      (measured
        ? ` (${like!.name} trained ${measured.steps} steps in ${measured.seconds.toFixed(0)} s)`
        : ''),
  };
}

async function testTasks(suiteDir: string): Promise<number> {
  const suite = await loadSuite(suiteDir);
  return suite.tasks.filter((task) => task.manifest.split === 'test').length;
}
