import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SystemError, UserError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { readDatasetFiles } from './dataset-files.js';
import { resolveHyperparameters } from './hyperparameters.js';
import { logTail, runLoggedProcess, type ProcessOutcome } from './logged-process.js';
import { PythonTrainingPlan, PythonTrainingReport } from './python-records.js';
import { parentWeightsOf, type Trainer, type TrainOptions } from './trainer.js';
import { defaultTrainerPython } from './trainer-python.js';
import type { TrainingResult } from './training-metrics.js';

/** The bundled script. Two folders up is the package root, from `src/train/` and from `dist/train/` alike. */
export const PYTHON_TRAINER_SCRIPT = fileURLToPath(
  new URL('../../src/train/python/train_lora.py', import.meta.url),
);

export interface PythonTrainerOptions {
  /** The Python that has torch, transformers and peft (`python/requirements.txt`); default: `defaultTrainerPython()`. */
  python?: string;
  /** Default: the bundled `train_lora.py`. */
  script?: string;
  /** Added to this process's environment (e.g. `CUDA_VISIBLE_DEVICES`, `HF_HOME`). */
  env?: Record<string, string>;
}

export interface PythonTrainer extends Trainer {
  /** The script's `--dry-run`: checks the data and returns what it would train, without torch. */
  plan(options: TrainOptions): Promise<PythonTrainingPlan>;
}

/** Files the back-end keeps in `outDir`. */
export const PYTHON_TRAINER_FILES = {
  config: 'config.json',
  log: 'train.log',
  dryRunLog: 'dry-run.log',
  report: 'report.json',
  plan: 'plan.json',
} as const;

/** Exit status with which the script reports bad data, configuration or environment. */
const USER_ERROR_EXIT = 2;

/**
 * LoRA training on a GPU with `python/train_lora.py`: the paper's recipe, the project's sampler, validation loss,
 * checkpoints, the best one merged into the parent. The script's output goes to `train.log`; its `report.json` is
 * read back into a `TrainingResult`.
 */
export function pythonTrainer(options: PythonTrainerOptions = {}): PythonTrainer {
  const python = options.python ?? defaultTrainerPython();
  const script = options.script ?? PYTHON_TRAINER_SCRIPT;

  async function run(train: TrainOptions, dryRun: boolean): Promise<string> {
    const dataset = await readDatasetFiles(train.dataset);
    const outDir = path.resolve(train.outDir);
    const configFile = path.join(outDir, PYTHON_TRAINER_FILES.config);
    const config = {
      parentModel: parentWeightsOf(train.parent),
      seed: train.seed,
      hyper: resolveHyperparameters(train.hyper),
    };
    await writeFileAtomic(configFile, `${JSON.stringify(config, null, 2)}\n`);
    // A file left by an earlier run must not pass for this run's.
    const product = dryRun ? PYTHON_TRAINER_FILES.plan : PYTHON_TRAINER_FILES.report;
    await rm(path.join(outDir, product), { force: true });
    const logFile = path.join(outDir, dryRun ? PYTHON_TRAINER_FILES.dryRunLog : PYTHON_TRAINER_FILES.log);
    const argv = [python, script, '--data', dataset.directory, '--out', outDir, '--config', configFile];
    const outcome = await runLoggedProcess({
      argv: dryRun ? [...argv, '--dry-run'] : argv,
      label: 'the python trainer',
      logFile,
      env: { ...process.env, ...options.env, PYTHONUNBUFFERED: '1' },
      signal: train.signal,
    });
    if (outcome.exitCode !== 0) throw await failure(outcome, logFile);
    return outDir;
  }

  return {
    kind: 'python',

    async train(train) {
      const outDir = await run(train, false);
      const logFile = path.join(outDir, PYTHON_TRAINER_FILES.log);
      const reportFile = path.join(outDir, PYTHON_TRAINER_FILES.report);
      const report = await PythonTrainingReport.readIfPresent(reportFile);
      if (report === undefined) {
        throw new SystemError(`the python trainer finished without writing ${reportFile}; see ${logFile}`);
      }
      return resultOf(report, outDir, logFile);
    },

    async plan(train) {
      const outDir = await run(train, true);
      return PythonTrainingPlan.read(path.join(outDir, PYTHON_TRAINER_FILES.plan));
    },
  };
}

async function failure(outcome: ProcessOutcome, logFile: string): Promise<Error> {
  const tail = await logTail(logFile);
  if (outcome.exitCode === USER_ERROR_EXIT) {
    const message = tail
      .split('\n')
      .reverse()
      .find((line) => line.startsWith('error: '));
    return new UserError(`the python trainer refused: ${message?.slice(7) ?? tail}\n(log: ${logFile})`);
  }
  const how =
    outcome.exitCode === null ? `was killed by ${outcome.signal}` : `exited with ${outcome.exitCode}`;
  return new SystemError(`the python trainer ${how}; its log is ${logFile}, ending:\n${tail}`);
}

async function resultOf(
  report: PythonTrainingReport,
  outDir: string,
  logFile: string,
): Promise<TrainingResult> {
  const inOut = (relative: string) => path.resolve(outDir, relative);
  const adapterPath = inOut(report.adapterPath);
  const mergedPath = report.mergedPath === null ? undefined : inOut(report.mergedPath);
  for (const weights of [adapterPath, mergedPath]) {
    if (weights !== undefined && !(await stat(weights).catch(() => undefined))) {
      throw new SystemError(
        `the python trainer reported ${weights}, which does not exist; see ${logFile}, and train again`,
      );
    }
  }
  const checkpoint = <T extends { path: string }>(value: T): T => ({ ...value, path: inOut(value.path) });
  return {
    adapterPath,
    mergedPath,
    logFile,
    metrics: {
      steps: report.steps,
      supervisedTokensProcessed: report.supervisedTokensProcessed,
      trainLoss: report.trainLoss,
      validationLoss: report.validationLoss,
      checkpoints: report.checkpoints.map(checkpoint),
      chosenCheckpoint: checkpoint(report.chosenCheckpoint),
    },
  };
}
