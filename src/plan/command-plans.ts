import { existsSync, readdirSync } from 'node:fs';

import { evaluationConfig, type EvaluationConfig, type RunConfig } from '../config/run-config.js';
import { recordInRun } from '../doctor/throughput-record.js';
import { errorMessage } from '../errors.js';
import { distillTaskPath, outerLoopFiles, runFiles } from '../store/run-paths.js';
import type { Run } from '../store/run-store.js';
import type { ModelRegistry } from '../records/registry.js';
import { describeAmount, describePlanCompact, describeSeconds } from './describe-plan.js';
import { planCost } from './plan-cost.js';
import { chooseThroughput } from './doctor-throughput.js';
import { planRun, type PlanOptions, type RunPlan } from './run-plan.js';
import { unitFigures } from './unit-figures.js';

/**
 * What `mass rsi` is about to do, in the plan's compact form, and the plan itself; a plan that cannot be made says why
 * in its text and never stops the run (the stage itself then says what is wrong).
 */
export async function loopPlan(options: {
  config: RunConfig;
  suiteDir: string;
  rounds: number;
  command: string;
  /** The run's directory: the wall time rests on `mass doctor`'s record there, when there is one. */
  runDirectory?: string;
}): Promise<{ plan: RunPlan | null; text: string }> {
  try {
    const throughput =
      options.runDirectory === undefined ? {} : await doctorThroughput(options.config, options.runDirectory);
    const plan = await planRun({ ...options, scope: 'loop', ...throughput });
    return { plan, text: describePlanCompact(plan, planCost(plan.roles), options.command) };
  } catch (error) {
    return { plan: null, text: `${options.command}: no plan: ${errorMessage(error)}` };
  }
}

/**
 * What `mass eval` is about to do: the generations the run's registry holds, each with the tasks its round distilled
 * (its collections), and the evaluation as the command line changed it.
 */
export async function evaluationPlanText(options: {
  config: RunConfig;
  evaluation: EvaluationConfig;
  suiteDir: string;
  run: Run<RunConfig>;
  registry: ModelRegistry;
  command: string;
}): Promise<string> {
  try {
    return await evaluationPlan(options);
  } catch (error) {
    return `${options.command}: no plan: ${errorMessage(error)}`;
  }
}

async function evaluationPlan(options: Parameters<typeof evaluationPlanText>[0]): Promise<string> {
  const { run, registry } = options;
  const generations = registry.list().map((generation) => ({
    name: generation.name,
    parent: generation.parent,
    distilled: distilledTasks(run, generation.name) > 0,
  }));
  const plan = await planRun({
    config: { ...options.config, evaluation: options.evaluation },
    suiteDir: options.suiteDir,
    rounds: Math.max(0, generations.length - 1),
    scope: 'evaluation',
    evaluated: { generations, distilledTasks: (generation) => distilledTasks(run, generation) },
    ...(await doctorThroughput(options.config, run.directory)),
  });
  return describePlanCompact(plan, planCost(plan.roles), options.command);
}

/** The throughput `mass doctor` recorded in the run's directory, as `planRun` takes it. */
async function doctorThroughput(
  config: RunConfig,
  runDirectory: string,
): Promise<Pick<PlanOptions, 'throughput' | 'throughputNote'>> {
  const choice = await chooseThroughput({ config, given: null, recordPath: recordInRun(runDirectory) });
  return { throughput: choice.throughput, throughputNote: choice.note };
}

/** The tasks of a generation's round that were collected: the folders of `distill/<generation>` with a collection. */
function distilledTasks(run: Run<RunConfig>, generation: string): number {
  const folder = run.path(runFiles.distill, generation);
  if (!existsSync(folder)) return 0;
  return readdirSync(folder).filter((task) =>
    existsSync(run.path(distillTaskPath(generation, task, outerLoopFiles.collection))),
  ).length;
}

/**
 * A benchmark's plan once it has planned its trials (`runBenchmarks` says how many): each trial one episode of the
 * agent, `evaluation.concurrency.episodes` at once; no judge.
 */
export function benchmarkPlanText(
  config: RunConfig,
  trials: number,
  usesModel: boolean,
  command: string,
): string {
  const units = unitFigures(config, null, null);
  const atOnce = evaluationConfig(config).concurrency.episodes;
  const seconds = Math.ceil(trials / atOnce) * units.episode.seconds.value;
  const disk = trials * units.episode.bytes.value;
  return (
    `${command}: plan: ${trials} trial(s), ${atOnce} at once, no judge calls; ` +
    (usesModel
      ? `about ${describeSeconds(seconds)} (${units.episode.seconds.basis}), `
      : 'no model calls, ') +
    `disk ${describeAmount(disk, 'B')} (${units.episode.bytes.basis})`
  );
}
