import { join } from 'node:path';

import { z } from 'zod';

import type { RunConfig } from '../config/run-config.js';
import { readWindowSummaries } from '../distill/read-window-summaries.js';
import { writeTrainingData } from '../distill/write-training-data.js';
import type { TrainingTokenizer } from '../session/training-tokenizer.js';
import { DATASET_FOLDER } from '../store/run-paths.js';
import type { Run } from '../store/run-store.js';
import type { Trainer } from '../train/trainer.js';
type ModelGeneration = Parameters<Trainer['train']>[0]['parent'];
import { TrainingMetrics } from '../records/training-metrics.js';
import { studentKey } from '../work/step-keys.js';
import type { WorkItem } from '../work/work-item.js';
import type { WorkRunner } from '../work/work-runner.js';
import type { StudentDataset } from './student-datasets.js';
import type { StudentResult } from '../records/students-record.js';
import type { ModelRegistry } from '../records/registry.js';
import { studentTrainingPlan, type StudentTraining } from './student-tokens.js';

const TrainStepOutput = z.object({
  adapterPath: z.string().optional(),
  mergedPath: z.string().optional(),
  metrics: TrainingMetrics,
  logFile: z.string(),
});

const DatasetOutput = z.object({ dir: z.string() });

/** One training at a time on this machine. */
const TRAINING_SLOTS = { pool: 'training', key: 'local', limit: 1 };

/**
 * A student's training data as work (`students/<student>/dataset`): its selected episodes of the parent run written as
 * windows in `<student>/dataset/`, with the round's validation selections of its kind.
 */
export function studentDataWork(options: {
  run: Run<RunConfig>;
  /** The parent run's directory, where the episodes are. */
  runDirectory: string;
  parentConfig: RunConfig;
  dataset: StudentDataset;
  tokenizer: TrainingTokenizer;
}): WorkItem<typeof DatasetOutput> {
  const { run, runDirectory, dataset, tokenizer } = options;
  const { student } = dataset;
  const dataDir = join(student.name, DATASET_FOLDER);
  return {
    kind: 'training-data',
    key: studentKey(student.name, 'dataset'),
    output: DatasetOutput,
    dir: dataDir,
    perform: async () => {
      await writeTrainingData({
        episodes: [
          ...[...dataset.team, ...dataset.single].map((episode) => ({
            dir: join(runDirectory, episode.dir),
            split: 'train' as const,
          })),
          ...dataset.validation.map((episode) => ({
            dir: join(runDirectory, episode.dir),
            split: 'validation' as const,
          })),
        ],
        outDir: run.path(dataDir),
        modelDirectory: tokenizer.modelDirectory,
        servedModel: tokenizer.servedModel,
        allowTokenizerMismatch: tokenizer.allowTokenizerMismatch,
        limits: {
          windowTokens: options.parentConfig.distill.windowTokens,
          maxContextTokens: options.parentConfig.distill.maxContextTokens,
        },
        mode: student.kind === 'S' ? 'single-agent' : 'team',
      });
      return { dir: dataDir };
    },
  };
}

/** The student's training plan from its data's windows: the sampler's exact token counts, and the hyperparameters. */
export async function studentPlan(
  run: Run<RunConfig>,
  dataDir: string,
  training: StudentTraining,
  parentConfig: RunConfig,
): Promise<ReturnType<typeof studentTrainingPlan>> {
  return studentTrainingPlan(
    await readWindowSummaries(run.path(dataDir), 'train'),
    training,
    parentConfig.rsi.hyperparameters,
  );
}

/**
 * A student's training as work (`students/<student>/train`), from the base, in `train/<student>/`, one at a time; a
 * trainer that resumes goes on from what an interrupted attempt left there.
 */
export function studentTrainingWork(options: {
  run: Run<RunConfig>;
  student: string;
  dataDir: string;
  trainer: Trainer;
  base: ModelGeneration;
  seed: number;
  hyper: ReturnType<typeof studentTrainingPlan>['hyper'];
}): WorkItem<typeof TrainStepOutput> {
  const { run, trainer } = options;
  const trainDir = join('train', options.student);
  return {
    kind: 'training',
    key: studentKey(options.student, 'train'),
    output: TrainStepOutput,
    dir: trainDir,
    keepDirOnRedo: trainer.resumes === true,
    slots: TRAINING_SLOTS,
    perform: ({ attempt }) =>
      trainer.train({
        dataset: run.path(options.dataDir),
        parent: options.base,
        outDir: run.path(trainDir),
        seed: options.seed,
        hyper: options.hyper,
        resume: attempt > 1,
        restartIfChanged: true,
      }),
  };
}

/** Each student's data, then its training from the base, as work of the experiment's run; each added to its registry. */
export async function trainStudents(options: {
  work: WorkRunner;
  run: Run<RunConfig>;
  runDirectory: string;
  parentConfig: RunConfig;
  datasets: readonly StudentDataset[];
  tokenizer: TrainingTokenizer;
  training: StudentTraining;
  trainer: Trainer;
  registry: ModelRegistry;
  base: ModelGeneration;
  servedAs: (student: string) => string;
  progress: (line: string) => void;
}): Promise<TrainedStudent[]> {
  const { work, run, runDirectory, parentConfig, tokenizer, training, trainer, registry, base, progress } =
    options;
  const trained: TrainedStudent[] = [];
  for (const dataset of options.datasets) {
    const { student } = dataset;
    progress(
      `student ${student.name}: data from ${dataset.team.length} team and ${dataset.single.length} single-agent episodes`,
    );
    const { dir: dataDir } = await work.submit(
      studentDataWork({ run, runDirectory, parentConfig, dataset, tokenizer }),
    );
    const { tokens, hyper } = await studentPlan(run, dataDir, training, parentConfig);
    progress(
      `student ${student.name}: training (${trainer.kind}), ${tokens.processedSupervisedTokens} supervised tokens processed`,
    );
    const result = await work.submit(
      studentTrainingWork({
        run,
        student: student.name,
        dataDir,
        trainer,
        base,
        seed: training.seed,
        hyper,
      }),
    );
    if (!registry.get(student.name)) {
      await registry.addTrained({
        name: student.name,
        parent: base.name,
        datasetId: dataDir,
        servedAs: options.servedAs(student.name),
        result,
      });
    }
    trained.push({
      name: student.name,
      kind: student.kind,
      teamEpisodes: dataset.team.length,
      singleEpisodes: dataset.single.length,
      episodeIds: [...dataset.team, ...dataset.single].map((episode) => episode.episodeId),
      validationEpisodeIds: dataset.validation.map((episode) => episode.episodeId),
      tokens,
      trainer: trainer.kind,
      metrics: result.metrics,
    });
  }

  return trained;
}

type TrainedStudent = Omit<
  StudentResult,
  'winRate' | 'winRateInterval' | 'winRateWithTies' | 'winRateWithTiesInterval' | 'pairs' | 'judge'
>;
