import { existsSync } from 'node:fs';
import path from 'node:path';

import { loadRunConfig } from '../../config/run-config.js';
import { trainerSetting, type TrainerSetting } from '../../config/rsi-settings.js';
import { TrainLaunch, type TrainLaunchInput } from '../../config/train-launch.js';
import { UserError } from '../../errors.js';
import { trainerFromSetting } from '../../hosting/model-kind.js';
import { describeIssues } from '../../store/describe-issues.js';
import type { ModelGeneration } from '../../records/model-generation.js';
import {
  PythonTrainingReport,
  type PythonTrainingPlan,
  type ResolvedLaunch,
} from '../../train/python-records.js';
import { PYTHON_TRAINER_FILES, type PythonTrainer } from '../../train/python-trainer.js';
import { checkInitAdapter, type TrainOptions } from '../../train/trainer.js';
import type { TrainingResult } from '../../records/training-metrics.js';
import { parsePositiveInteger } from '../duration.js';

interface TrainFlags {
  data: string;
  base: string;
  out: string;
  config?: string;
  steps?: string;
  seed: string;
  initAdapter?: string;
  resume?: boolean;
  processes?: string;
  gpusPerReplica?: string;
  sharding?: string;
  plan?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

export async function trainAction(flags: TrainFlags): Promise<void> {
  const outDir = path.resolve(flags.out);
  const { setting, hyperparameters } = await trainSettings(flags);
  const train: TrainOptions = {
    dataset: checkDataDirectory(flags.data),
    parent: standaloneBase(flags.base),
    outDir,
    seed: parsePositiveInteger(flags.seed, '--seed'),
    hyper: {
      ...hyperparameters,
      ...(flags.steps === undefined ? {} : { steps: positive(flags.steps, '--steps') }),
    },
    initAdapter:
      flags.initAdapter === undefined
        ? undefined
        : await checkInitAdapter(flags.initAdapter, '--init-adapter'),
    resume: flags.resume === true,
  };
  const trainer = trainerFromSetting(setting);
  if (flags.plan || flags.dryRun) {
    const mode = flags.plan ? '--plan' : '--dry-run';
    if (flags.plan && flags.dryRun) throw new UserError('--plan and --dry-run: give one of them');
    if (flags.resume)
      throw new UserError(`${mode} trains nothing, so there is nothing to --resume: leave one out`);
    if (setting.kind !== 'python') {
      throw new UserError(`${mode} needs the python trainer; ${flags.config}'s rsi.trainer is a command`);
    }
    const python = trainer as PythonTrainer;
    const plan = await (flags.plan ? python.plan(train) : python.dryRun(train));
    console.log(flags.json ? JSON.stringify({ out: outDir, plan }, null, 2) : describePlan(plan, outDir));
    return;
  }
  if (flags.resume && !trainer.resumes) {
    throw new UserError(`--resume needs the python trainer; ${flags.config}'s rsi.trainer is a command`);
  }
  process.stderr.write(
    `mass train: ${trainer.kind} trainer over ${train.parent.mergedPath} on ${train.dataset}; ` +
      `${flags.resume ? 'resuming ' : ''}into ${outDir} (log: ${logFileOf(setting, outDir)})\n`,
  );
  const result = await trainer.train(train);
  const report =
    setting.kind === 'python'
      ? await PythonTrainingReport.read(path.join(outDir, PYTHON_TRAINER_FILES.report))
      : null;
  if (flags.json) {
    console.log(JSON.stringify({ out: outDir, trainer: trainer.kind, ...result, report }, null, 2));
  } else {
    console.log(describeTraining(result, report, outDir));
  }
}

/** The trainer and recipe: the configuration's (`--config`), else the python trainer and the paper's recipe. */
async function trainSettings(
  flags: TrainFlags,
): Promise<{ setting: TrainerSetting; hyperparameters: Record<string, unknown> }> {
  const config = flags.config === undefined ? undefined : await loadRunConfig(flags.config);
  const setting = config ? trainerSetting(config.rsi) : { kind: 'python' as const };
  const hyperparameters = config?.rsi.hyperparameters ?? {};
  const launchFlags: TrainLaunchInput = {
    ...(flags.processes === undefined ? {} : { processesPerNode: positive(flags.processes, '--processes') }),
    ...(flags.gpusPerReplica === undefined
      ? {}
      : { gpusPerReplica: positive(flags.gpusPerReplica, '--gpus-per-replica') }),
    ...(flags.sharding === undefined ? {} : { sharding: sharding(flags.sharding) }),
  };
  const given = Object.keys(launchFlags);
  if (setting.kind !== 'python') {
    if (given.length > 0) {
      throw new UserError(
        `--processes, --gpus-per-replica and --sharding launch the python trainer; ${flags.config}'s rsi.trainer is a command`,
      );
    }
    return { setting, hyperparameters };
  }
  if (given.length === 0) return { setting, hyperparameters };
  const launch = TrainLaunch.safeParse({ ...setting.launch, ...launchFlags });
  if (!launch.success) {
    throw new UserError(
      `the launch (${flags.config ? `${flags.config}'s rsi.trainer.launch with ` : ''}--processes, ` +
        `--gpus-per-replica, --sharding): ${describeIssues(launch.error)}`,
    );
  }
  return { setting: { ...setting, launch: launch.data }, hyperparameters };
}

function positive(text: string, flag: string): number {
  const value = parsePositiveInteger(text, flag);
  if (value === 0) throw new UserError(`${flag} must be at least 1`);
  return value;
}

function sharding(text: string): 'ddp' | 'fsdp' {
  if (text !== 'ddp' && text !== 'fsdp') {
    throw new UserError(
      `--sharding "${text}": use ddp (each replica holds the whole model) or fsdp (the model sharded over the processes)`,
    );
  }
  return text;
}

function checkDataDirectory(data: string): string {
  const absolute = path.resolve(data);
  if (!existsSync(absolute)) {
    throw new UserError(
      `--data ${absolute} does not exist: give a training-data directory (\`mass data build --out\`, or a run's distill/<generation>/dataset)`,
    );
  }
  return absolute;
}

/** The model trained over, as the one generation of a training outside a loop: a directory, or a hub id kept as is. */
function standaloneBase(base: string): ModelGeneration {
  const absolute = path.resolve(base);
  const isPath = path.isAbsolute(base) || base.startsWith('.');
  if (!existsSync(absolute) && isPath) {
    throw new UserError(
      `--base ${absolute} does not exist: give a model directory or a hub id (Qwen/Qwen3-8B)`,
    );
  }
  const weights = existsSync(absolute) ? absolute : base;
  return {
    name: 'base',
    parent: null,
    mergedPath: weights,
    datasetId: null,
    metrics: null,
    servedAs: weights,
    createdAt: new Date().toISOString(),
  };
}

function logFileOf(setting: TrainerSetting, outDir: string): string {
  return path.join(outDir, setting.kind === 'python' ? PYTHON_TRAINER_FILES.log : 'train.log');
}

function describeLaunch(launch: ResolvedLaunch): string {
  const replicas = `${launch.replicas} replica${launch.replicas === 1 ? '' : 's'}`;
  const gpus = `${launch.gpusPerReplica} GPU${launch.gpusPerReplica === 1 ? '' : 's'} each`;
  return (
    `${launch.command.join(' ')}\n    (${launch.nodes} node(s) × ${launch.processesPerNode} process(es), ${replicas}` +
    `${launch.device === 'cuda' ? `, ${gpus}` : ''}, ${launch.sharding}, ${launch.device})`
  );
}

function loss(value: number | undefined): string {
  return value === undefined ? 'none' : value.toFixed(4);
}

export function describeTraining(
  result: TrainingResult,
  report: PythonTrainingReport | null,
  outDir: string,
): string {
  const { metrics } = result;
  const chosen = metrics.chosenCheckpoint;
  const lines = [
    `Trained into ${outDir}: ${metrics.steps ?? 'unknown'} steps, final validation loss ` +
      `${loss(metrics.validationLoss.at(-1)?.loss)}, chosen ${
        chosen ? `${loss(chosen.validationLoss ?? undefined)} (step ${chosen.step})` : 'none'
      }`,
    `  adapter: ${result.adapterPath ?? 'none'}`,
    `  merged:  ${result.mergedPath ?? 'none (mergeIntoParent false)'}`,
  ];
  if (report?.launch) lines.push(`  launch:  ${describeLaunch(report.launch)}`);
  if (report?.resumedFromStep != null) lines.push(`  resumed from step ${report.resumedFromStep}`);
  if (report?.initAdapter) lines.push(`  started from the adapter ${report.initAdapter}`);
  lines.push(
    `  log: ${result.logFile}${report ? `; report: ${path.join(outDir, PYTHON_TRAINER_FILES.report)}` : ''}`,
  );
  return lines.join('\n');
}

export function describePlan(plan: PythonTrainingPlan, outDir: string): string {
  const { hyper } = plan;
  const lines = [
    `Planned (nothing trained): ${path.join(outDir, PYTHON_TRAINER_FILES.plan)}`,
    `  data:    ${plan.train.windows} train windows (${plan.train.supervisedTokens} supervised tokens), ` +
      `${plan.validation.windows} validation windows`,
    `  steps:   ${hyper.steps} × ${hyper.batchSize} windows, ${plan.processedSupervisedTokens} supervised tokens ` +
      `processed; validation at ${plan.evaluationSteps.length} steps, ${plan.checkpointSteps.length} checkpoints`,
  ];
  if (plan.launch) lines.push(`  launch:  ${describeLaunch(plan.launch)}`);
  lines.push(`  memory:  ${describeMemory(plan)}`);
  return lines.join('\n');
}

/** The planner's estimate in a line: the largest per-GPU need, the GPU's memory, whether it fits; the rest is in plan.json. */
function describeMemory(plan: PythonTrainingPlan): string {
  if (plan.memory === null) return plan.memoryNote ?? 'no estimate';
  const { estimate, gpuMemory, fits } = plan.memory as {
    estimate?: { perGpu?: unknown };
    gpuMemory?: unknown;
    fits?: unknown;
  };
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  const perGpu = Array.isArray(estimate?.perGpu)
    ? estimate.perGpu.filter((bytes): bytes is number => typeof bytes === 'number')
    : [];
  const parts = [
    perGpu.length === 0 ? 'estimated' : `${gib(Math.max(...perGpu))} per GPU at most`,
    typeof gpuMemory === 'number' ? `of ${gib(gpuMemory)}` : 'on GPUs of unknown memory',
    fits === true ? '(fits)' : fits === false ? '(does not fit)' : '',
  ];
  return `${parts.filter(Boolean).join(' ')}; the whole estimate is in plan.json`;
}
