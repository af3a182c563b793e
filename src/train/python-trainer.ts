import { appendFile, mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { TrainLaunch } from '../config/train-launch.js';
import { SystemError, UserError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { configDifferences } from '../store/config-differences.js';
import { readDatasetFiles } from './dataset-files.js';
import { resolveHyperparameters, type TrainingHyperparameters } from './hyperparameters.js';
import { logTail, runLoggedProcess, type ProcessOutcome } from './logged-process.js';
import { PythonTrainingPlan, PythonTrainingReport } from './python-records.js';
import { checkInitAdapter, trainingWeightsOf, type Trainer, type TrainOptions } from './trainer.js';
import { defaultTrainerPython } from './trainer-python.js';
import type { TrainingResult } from '../records/training-metrics.js';

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
  /** Processes, machines, GPUs per replica and sharding; what it leaves out, the script chooses. */
  launch?: TrainLaunch;
}

export interface PythonTrainer extends Trainer {
  /**
   * The script's `--plan`: checks the data, resolves the launch and estimates its memory (torch needed), and returns
   * the plan, training nothing. A launch that would not fit is refused with a `UserError` naming settings that would.
   */
  plan(options: TrainOptions): Promise<PythonTrainingPlan>;
  /** The script's `--dry-run`: checks the data and returns the steps it would train, without torch (no launch). */
  dryRun(options: TrainOptions): Promise<PythonTrainingPlan>;
}

/** Files the back-end keeps in `outDir`. */
export const PYTHON_TRAINER_FILES = {
  config: 'config.json',
  log: 'train.log',
  planLog: 'plan.log',
  report: 'report.json',
  plan: 'plan.json',
} as const;

/** `config.json`: what the script trains, from what, and how it launches; `null` leaves a choice to the script. */
export interface PythonTrainerConfig {
  parentModel: string;
  seed: number;
  hyper: TrainingHyperparameters;
  initAdapter: string | null;
  launch: {
    processesPerNode: number | null;
    nodes: number;
    nodeRank: number;
    rdzvEndpoint: string | null;
    gpusPerReplica: number | null;
    sharding: 'ddp' | 'fsdp';
    gpuMemoryGiB: number | null;
  };
}

/** Exit status with which the script reports bad data, configuration or environment. */
const USER_ERROR_EXIT = 2;

/**
 * LoRA training on GPUs with `python/train_lora.py`: the paper's recipe, the project's sampler, validation loss,
 * checkpoints, the best one merged into the weights it was trained over; data-parallel over processes and machines
 * (torchrun), resumable, optionally starting from an adapter. The script's output goes to `train.log`; its
 * `report.json` is read back into a `TrainingResult`.
 */
export function pythonTrainer(options: PythonTrainerOptions = {}): PythonTrainer {
  const python = options.python ?? defaultTrainerPython();
  const script = options.script ?? PYTHON_TRAINER_SCRIPT;

  async function run(train: TrainOptions, mode: Mode): Promise<{ outDir: string; logFile: string }> {
    const dataset = await readDatasetFiles(train.dataset);
    const outDir = path.resolve(train.outDir);
    const configFile = path.join(outDir, PYTHON_TRAINER_FILES.config);
    const config: PythonTrainerConfig = {
      parentModel: trainingWeightsOf(train),
      seed: train.seed,
      hyper: resolveHyperparameters(train.hyper),
      initAdapter: train.initAdapter === undefined ? null : await checkInitAdapter(train.initAdapter),
      launch: launchConfig(options.launch),
    };
    const logFile = path.join(
      outDir,
      mode === 'train' ? PYTHON_TRAINER_FILES.log : PYTHON_TRAINER_FILES.planLog,
    );
    const note = (line: string) => appendLog(logFile, line);
    let resume = mode === 'train' && train.resume === true;
    const changed = await changesSince(configFile, config);
    if (resume && changed !== undefined) {
      if (!train.restartIfChanged) {
        throw new UserError(
          `${outDir} holds a training of another configuration (${changed}), which cannot be resumed with ` +
            'this one: resume it with the settings it started with, or train into another folder',
        );
      }
      await rm(outDir, { recursive: true, force: true });
      await note(
        `the configuration changed since the interrupted training (${changed}): its folder was emptied and it ` +
          'is trained afresh',
      );
      resume = false;
    } else if (resume && (await finishedIn(outDir, logFile))) {
      // Killed after the report was written: the same training, finished; nothing is trained again.
      await note(`resuming: the training in ${outDir} had finished (report.json); nothing left to train`);
      return { outDir, logFile };
    } else if (changed !== undefined && (await unfinishedIn(outDir))) {
      // Its config.json is what a later --resume is checked against: it is not replaced by another training's.
      throw new UserError(
        `${outDir} holds an unfinished training of another configuration (${changed}): resume it with the ` +
          `settings it started with (--resume), or ${mode === 'train' ? 'train' : 'plan'} into another folder`,
      );
    }
    // A product left by an earlier run must not pass for this run's: the script must write it anew.
    const product = path.join(
      outDir,
      mode === 'train' ? PYTHON_TRAINER_FILES.report : PYTHON_TRAINER_FILES.plan,
    );
    const earlier = await fileIdentity(product);
    await writeFileAtomic(configFile, `${JSON.stringify(config, null, 2)}\n`);
    const argv = [python, script, '--data', dataset.directory, '--out', outDir, '--config', configFile];
    if (mode !== 'train') argv.push(`--${mode}`);
    if (resume) argv.push('--resume');
    const outcome = await runLoggedProcess({
      argv,
      label: 'the python trainer',
      logFile,
      env: { ...process.env, ...options.env, PYTHONUNBUFFERED: '1' },
      signal: train.signal,
    });
    if (outcome.exitCode !== 0) throw await failure(outcome, logFile);
    const written = await fileIdentity(product);
    if (written === undefined || written === earlier) {
      const left = written === undefined ? '' : ' (the one there is left from an earlier run)';
      throw new SystemError(`the python trainer finished without writing ${product}${left}; see ${logFile}`);
    }
    return { outDir, logFile };
  }

  const readPlan = async (train: TrainOptions, mode: Mode) => {
    const { outDir } = await run(train, mode);
    return PythonTrainingPlan.read(path.join(outDir, PYTHON_TRAINER_FILES.plan));
  };

  return {
    kind: 'python',
    resumes: true,
    needsValidation: true,

    async train(train) {
      const { outDir, logFile } = await run(train, 'train');
      const report = await PythonTrainingReport.read(path.join(outDir, PYTHON_TRAINER_FILES.report));
      return resultOf(report, outDir, logFile);
    },

    plan: (train) => readPlan(train, 'plan'),
    dryRun: (train) => readPlan(train, 'dry-run'),
  };
}

type Mode = 'train' | 'plan' | 'dry-run';

/** True when `outDir` holds the report of a finished training whose weights are all there. */
async function finishedIn(outDir: string, logFile: string): Promise<boolean> {
  try {
    const report = await PythonTrainingReport.readIfPresent(path.join(outDir, PYTHON_TRAINER_FILES.report));
    return report !== undefined && (await resultOf(report, outDir, logFile)) !== undefined;
  } catch {
    return false;
  }
}

/** True when `outDir` holds a training that started (its log) and did not finish (no report): it may be resumed. */
async function unfinishedIn(outDir: string): Promise<boolean> {
  const present = async (name: string) =>
    (await stat(path.join(outDir, name)).catch(() => undefined)) !== undefined;
  return (await present(PYTHON_TRAINER_FILES.log)) && !(await present(PYTHON_TRAINER_FILES.report));
}

async function appendLog(logFile: string, line: string): Promise<void> {
  await mkdir(path.dirname(logFile), { recursive: true });
  await appendFile(logFile, `[${new Date().toISOString()}] ${line}\n`);
}

/** `config.json`'s `launch`: the configured settings, `null` for each the script is to choose. */
export function launchConfig(launch: TrainLaunch | undefined): PythonTrainerConfig['launch'] {
  return {
    processesPerNode: launch?.processesPerNode ?? null,
    nodes: launch?.nodes ?? 1,
    nodeRank: launch?.nodeRank ?? 0,
    rdzvEndpoint: launch?.rdzvEndpoint ?? null,
    gpusPerReplica: launch?.gpusPerReplica ?? null,
    sharding: launch?.sharding ?? 'ddp',
    gpuMemoryGiB: launch?.gpuMemoryGiB ?? null,
  };
}

/**
 * The recipe settings that change how a training runs, not what it computes: a training may be resumed with others
 * (a smaller loss chunk after running out of memory, say), as with another launch.
 */
const RUN_SETTINGS = ['lossChunkSize', 'resumeEvery', 'gradientCheckpointing'];

/** What a `config.json` trains: everything but the launch and the recipe's run settings. */
function trainingOf(config: unknown): unknown {
  const {
    launch: _launch,
    hyper,
    ...training
  } = (JSON.parse(JSON.stringify(config ?? {})) ?? {}) as Record<string, unknown>;
  if (hyper === null || typeof hyper !== 'object') return { ...training, hyper };
  return {
    ...training,
    hyper: Object.fromEntries(Object.entries(hyper).filter(([key]) => !RUN_SETTINGS.includes(key))),
  };
}

/**
 * How the training `config` differs from the one an earlier run left in `configFile` (what it trains: weights, seed,
 * recipe, starting adapter; not how it is launched or run), or undefined when it is the same training or none was
 * left.
 */
async function changesSince(configFile: string, config: PythonTrainerConfig): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch {
    return undefined;
  }
  let previous: unknown;
  try {
    previous = JSON.parse(text);
  } catch {
    return `${configFile} is not JSON`;
  }
  const differences = configDifferences(trainingOf(previous), trainingOf(config));
  if (differences.length === 0) return undefined;
  const preview = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value));
  const listed = differences
    .slice(0, 4)
    .map(({ field, frozen, given }) => `${field}: ${preview(frozen)} then, ${preview(given)} now`);
  if (differences.length > 4) listed.push(`and ${differences.length - 4} more`);
  return listed.join('; ');
}

/** What tells a rewritten file from the one that was there: inode, size and times. */
async function fileIdentity(file: string): Promise<string | undefined> {
  const found = await stat(file).catch(() => undefined);
  return found && `${found.ino}:${found.size}:${found.mtimeMs}:${found.ctimeMs}`;
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
