import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

import { RunConfig } from '../config/run-config.js';
import { evaluationConfig } from '../config/evaluation-settings.js';
import { UserError } from '../errors.js';
import { evaluateRun } from '../evaluate/evaluate-run.js';
import type { EvaluationSummary } from '../records/evaluation-records.js';
import type { ComparisonWinRates } from '../records/evaluation-figures.js';
import { RunNotifications } from '../notify/run-notifications.js';
import { configuredModel, RunSession } from '../session/run-session.js';
import { localEpisodeBackend, type EpisodeBackend } from '../queue/episode-backend.js';
import { trainingTokenizer } from '../session/training-tokenizer.js';
import { openRun, type Run } from '../store/run-store.js';
import { ModelRegistry } from '../records/registry.js';
import { studentDataset, type StudentSpec } from './student-datasets.js';
import { STUDENT_KIND_NAMES } from '../records/students-record.js';
import type { StudentTraining } from './student-tokens.js';
import { selectionPools } from './selection-pools.js';
import { trainStudents } from './student-training.js';
import { WorkRunner } from '../work/work-runner.js';
import { DEFAULT_LENGTH_RATIO } from './length-ratio.js';
import { judgeTeamVersusSingle } from './team-versus-single.js';
import type { StudentResult } from '../records/students-record.js';
import { StudentsRecord } from '../records/students-record.js';
import { STUDENTS_FOLDER } from '../store/run-paths.js';
/** The evaluation of the students against the base, inside the experiment's run directory. */
export const STUDENTS_EVALUATION = 'students';
/** The base every student is trained from and compared with. */
export const BASE_GENERATION = 'L0';

export interface StudentsOptions {
  /** The run directory whose round of collections the students are trained on. */
  runDirectory: string;
  /** The round (default L0). */
  generation?: string;
  /** The experiment's name: `students/<name>/` (default `default`). */
  name?: string;
  /** None: the experiment only judges the round's team outputs against its single-agent ones. */
  students: readonly StudentSpec[];
  training: StudentTraining;
  /** Pairs whose output tokens are within this ratio of each other are the length-matched ones (default 1.25). */
  lengthRatio?: number;
  /** Evaluation episodes per task and student (default 2). */
  rollouts?: number;
  /** The evaluation's tasks (default: the run's evaluation section's, else its suite's test split). */
  tasks?: readonly string[];
  /** The run's suite folder, from its configuration (its `suite`, resolved where the command runs). */
  suiteDir: (config: RunConfig) => string;
  /** Where the evaluation's episodes run, from the run's configuration (default: in this process); closed after. */
  backend?: (config: RunConfig) => EpisodeBackend;
  onProgress?: (line: string) => void;
}

/**
 * The paper's Figure 6 on one round of a run: from its selected team and single-agent episodes, S, M and X datasets of
 * the given sizes; each student trained from the same base (the run's L0) by the run's trainer; each evaluated against
 * the base by the run's external judges, with intervals over episode pairs; and each student's processed supervised
 * tokens from the sampler's exact counts. The experiment is a run directory of its own, `students/<name>/` inside the
 * run, whose registry holds the base and the students, so the evaluation is `mass eval`'s; every dataset, training and
 * evaluation episode, grade and judgment is a step of it, so a killed experiment resumes without redoing any. Its
 * judgments and evaluation are journaled and budgeted under the stage `students`; the run's `notify` command hears of
 * a budget that stops it, a failure, and its end.
 */
export async function runStudents(options: StudentsOptions): Promise<StudentsRecord> {
  const runDirectory = resolve(options.runDirectory);
  const notifications = new RunNotifications(readParentConfig(runDirectory), runDirectory, 'mass students');
  return notifications.around(async () => {
    const record = await studentsExperiment(options);
    notifications.stageFinished('students', record.generation, `experiment ${record.name}`);
    return record;
  });
}

async function studentsExperiment(options: StudentsOptions): Promise<StudentsRecord> {
  const runDirectory = resolve(options.runDirectory);
  const generation = options.generation ?? BASE_GENERATION;
  const name = options.name ?? 'default';
  const progress = options.onProgress ?? (() => {});
  const parentConfig = readParentConfig(runDirectory);
  const parentRegistry = await ModelRegistry.open(runDirectory);
  const base = parentRegistry.get(BASE_GENERATION);
  if (!base) {
    throw new UserError(
      `${runDirectory}: the run has no base generation ${BASE_GENERATION} yet (run mass rsi first)`,
    );
  }
  const pools = await selectionPools(runDirectory, generation);
  const datasets = options.students.map((student) => studentDataset(pools, student));
  const { kind } = configuredModel(parentConfig);
  const trainer = kind.trainer();
  if (trainer.needsValidation) {
    const unvalidated = datasets.find((dataset) => dataset.validation.length === 0);
    if (unvalidated) {
      throw new UserError(
        `student ${unvalidated.student.name}: the ${trainer.kind} trainer chooses its checkpoint by validation loss, and ` +
          `${generation} selected no validation episode of its kind (${STUDENT_KIND_NAMES[unvalidated.student.kind]}); ` +
          'run the round with distill.validation of 1 or more',
      );
    }
  }
  const evaluationDefaults = evaluationConfig(parentConfig);
  if (evaluationDefaults.judges.length === 0) {
    throw new UserError(
      `${runDirectory}: the run's configuration names no external judge (evaluation.judges); the students are judged against the base by them`,
    );
  }
  const config: RunConfig = { ...parentConfig, name };
  const run = openRun({
    runsDirectory: join(runDirectory, STUDENTS_FOLDER),
    name,
    configSchema: RunConfig,
    config,
    // The experiment's configuration is the run's, which may have gained an evaluation section since.
    overrideConfig: true,
    command: 'mass students',
  });
  // The evaluation's episodes run where the parent run's configuration says, for the parent run's directory.
  const session = new RunSession(
    run as Run<RunConfig>,
    options.suiteDir(parentConfig),
    kind,
    (runConfig) => options.backend?.(runConfig) ?? localEpisodeBackend,
  );
  const endpointPools = session.endpointPools();
  try {
    const teamVersusSingle = await judgeTeamVersusSingle({
      runDirectory,
      session,
      config: parentConfig,
      generation,
      lengthRatio: options.lengthRatio ?? DEFAULT_LENGTH_RATIO,
      onProgress: progress,
    });
    if (teamVersusSingle === null) {
      if (datasets.length === 0) {
        throw new UserError(
          `${runDirectory}: ${generation} collected no task single-agent (distill.singleAgentCollection), so there is nothing to judge; name students to train with --students`,
        );
      }
      progress(
        `${generation} collected no task single-agent (distill.singleAgentCollection): the team's outputs are not judged against a single agent's`,
      );
    }
    const finish = async (
      evaluation: StudentsRecord['evaluation'],
      students: StudentResult[],
    ): Promise<StudentsRecord> => {
      const record: StudentsRecord = {
        name,
        generation,
        base: BASE_GENERATION,
        trainer: trainer.kind,
        standIn: kind.host.standIn,
        evaluation,
        students,
        teamVersusSingle,
      };
      await StudentsRecord.write(run.path('students.json'), record);
      return record;
    };
    if (datasets.length === 0) return await finish(null, []);
    const registry = await ModelRegistry.open(run.directory);
    if (!registry.get(BASE_GENERATION)) {
      await registry.addBase({
        model: absoluteWeights(base.mergedPath ?? base.adapterPath!, runDirectory),
        servedAs: base.servedAs,
      });
    }
    const baseGeneration = registry.require(BASE_GENERATION);
    const tokenizer = await trainingTokenizer(
      parentConfig,
      parentRegistry,
      BASE_GENERATION,
      kind.anyTokenizer,
    );
    const trained = await trainStudents({
      work: new WorkRunner(run, endpointPools),
      run,
      runDirectory,
      parentConfig,
      datasets,
      tokenizer,
      training: options.training,
      trainer,
      registry,
      base: baseGeneration,
      servedAs: (student) => `${base.servedAs}-student-${name}-${student}`,
      progress,
    });
    const tasks = options.tasks ?? evaluationDefaults.tasks ?? parentConfig.tasks;
    const evaluation = {
      ...evaluationDefaults,
      name: STUDENTS_EVALUATION,
      generations: [BASE_GENERATION, ...trained.map((student) => student.name)],
      models: undefined,
      comparisons: trained.map((student) => ({ candidate: student.name, baseline: BASE_GENERATION })),
      conditions: ['bare' as const],
      ...(tasks ? { tasks: [...tasks] } : {}),
      rollouts: options.rollouts ?? 2,
      transfer: [],
      selfJudge: false,
      tournamentSample: 0,
      searchCoverage: undefined,
    };
    progress(
      `evaluation: ${trained.length} students against ${BASE_GENERATION}, ${evaluation.rollouts} rollout(s) per task`,
    );
    // Journaled and budgeted under the stage `students`, in the experiment's own run directory.
    const summary = await evaluateRun({ session, evaluation, stage: 'students' });
    return await finish(
      {
        rollouts: evaluation.rollouts,
        tasks: summary.tasks,
        judges: evaluation.judges.map((judge) => judge.name ?? judge.model),
        condition: 'bare',
      },
      trained.map((student) => ({ ...student, ...winAgainstBase(summary, student.name) })),
    );
  } finally {
    await endpointPools.close();
    await session.close();
  }
}

/** The student's pooled row against the base: every judge pooled when there are several, else the one judge. */
export function winAgainstBase(
  summary: Pick<EvaluationSummary, 'figures'>,
  student: string,
): Pick<
  StudentResult,
  'winRate' | 'winRateInterval' | 'winRateWithTies' | 'winRateWithTiesInterval' | 'pairs' | 'judge'
> {
  const comparison: ComparisonWinRates | undefined = summary.figures.winRates.find(
    (entry) =>
      entry.candidate === student && entry.baseline === BASE_GENERATION && entry.condition === 'bare',
  );
  const judges = comparison?.judges.filter((entry) => entry.judge !== 'oracle') ?? [];
  const row = judges.find((entry) => entry.judge === 'all judges') ?? judges[0];
  if (!row) {
    return {
      winRate: null,
      winRateInterval: null,
      winRateWithTies: null,
      winRateWithTiesInterval: null,
      pairs: 0,
      judge: null,
    };
  }
  const { pooled } = row;
  return {
    winRate: pooled.winRate,
    winRateInterval: pooled.winRateInterval,
    winRateWithTies: pooled.winRateWithTies,
    winRateWithTiesInterval: pooled.winRateWithTiesInterval,
    pairs: pooled.pairs,
    judge: row.judge,
  };
}

function readParentConfig(runDirectory: string): RunConfig {
  // The run's frozen configuration, as `mass rsi` froze it: opened (and locked) briefly by the store itself.
  const run = openRun({
    runsDirectory: dirname(runDirectory),
    name: basename(runDirectory),
    configSchema: RunConfig,
    command: 'mass students',
  });
  try {
    return run.config;
  } finally {
    run.close();
  }
}

function absoluteWeights(weights: string, runDirectory: string): string {
  if (isAbsolute(weights)) return weights;
  const inRun = join(runDirectory, weights);
  return existsSync(inRun) ? inRun : weights;
}
