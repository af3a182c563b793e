import { dataSeeds, taskDataSeed } from '../config/data-seeds.js';
import { evaluationConfig } from '../config/evaluation-settings.js';
import type { RunConfig } from '../config/run-config.js';
import { generationModels, type EvaluatedModel } from '../evaluate/evaluation-plan.js';
import { serveEvaluation, type ServedEvaluation } from '../evaluate/serve-evaluation.js';
import { errorMessage, UserError } from '../errors.js';
import { StageSpending } from '../cost/stage-spending.js';
import type { ContainerImage } from '../episode/sandbox-container.js';
import type { EpisodeNetwork } from '../tasks/task-network.js';
import type { RunSession } from '../session/run-session.js';
import type { Run } from '../store/run-store.js';
import { harborLoadedTask } from '../tasks/harbor-loaded-task.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { ModelRegistry } from '../records/registry.js';
import { runStudy, WorkRunner } from '../work/work-runner.js';
import { benchmarkFigures, taskRows } from './benchmark-figures.js';
import {
  BenchmarkSummaryRecord,
  benchmarkPath,
  type BenchmarkAgent,
  type BenchmarkSummary,
  type BenchmarkTrial,
  type SkippedTask,
  usesModel,
  type VerifiedTrial,
} from '../records/benchmark-records.js';
import {
  containerTrialWork,
  trialWork,
  verificationWork,
  type TrialContext,
  type TrialIdentity,
} from './benchmark-trials.js';
import { containerImageStep } from './container-images.js';
import { infrastructureLoss, officialFigures } from '../records/benchmark-official-figures.js';
import { internetLabel, taskEnvironment, type InternetPolicy } from './task-environment.js';

/** The tasks of one benchmark (a dataset folder, or the tasks given one by one). */
export interface BenchmarkDataset {
  name: string;
  sources: string[];
  tasks: HarborTask[];
  /** Tasks refused for what their folders hold (links, special files, past the size limits), with the reason. */
  refused?: SkippedTask[];
}

export type BenchmarkProgress =
  | {
      kind: 'planned';
      benchmark: string;
      trials: number;
      skipped: SkippedTask[];
      /** Each task that runs, with its network (`internetLabel`). */
      internet: Array<{ task: string; internet: string }>;
    }
  | { kind: 'finished'; what: 'trial' | 'verification' };

export interface BenchmarkRunOptions {
  /** The run's session: its configuration, model kind, registry, episode back-end and endpoint pools. */
  session: RunSession;
  datasets: BenchmarkDataset[];
  agent: BenchmarkAgent;
  /** The registry's generations that work the tasks (default every one); ignored by oracle and nop. */
  generations?: string[];
  trials: number;
  internet: InternetPolicy;
  /** Images whose environment the host provides. */
  hostCompatibleImages: string[];
  /** The engine that starts tasks' own containers; null: such tasks are skipped. */
  containerEngine: 'docker' | 'podman' | null;
  onProgress?: (event: BenchmarkProgress) => void;
}

const BOOTSTRAP = { resamples: 2000 };

/**
 * Runs Harbor-format benchmarks on a run's generations: every runnable task, `trials` times per generation with the
 * same sampling seeds across generations, each trial verified by its task's tests in a fresh sandbox. Every trial and
 * every verification is a step under `benchmarks/<benchmark>/`, so a killed benchmark goes on where it stopped;
 * episodes wait out model-server outages as the evaluation's do. A model's trial is not started once a budget over
 * the stage `benchmark` is spent (`BudgetExhaustedError`, exit 3), and a rerun with the budget raised redoes none. Tasks that cannot run here are listed with the
 * reason in the summary, never dropped.
 */
export async function runBenchmarks(options: BenchmarkRunOptions): Promise<BenchmarkSummary[]> {
  const { session, agent } = options;
  const { run, config } = session;
  if (config.sandbox === 'unsandboxed') refuseUnsandboxed(options);
  const report = options.onProgress ?? (() => {});
  const registry = await session.registry();
  const models = usesModel(agent) ? generationsOf(config, registry, options.generations) : [];
  const served: ServedEvaluation | null = usesModel(agent)
    ? await serveEvaluation(config, session.kind.host, models, [], { selfJudge: false, registry })
    : null;
  const pools = session.endpointPools(run.path('benchmarks', 'outages.jsonl'));
  const concurrency = evaluationConfig(config).concurrency.episodes;
  const labels = usesModel(agent) ? models.map((model) => model.name) : [agent];
  const seeds = dataSeeds(config);
  const summaries: BenchmarkSummary[] = [];
  try {
    for (const dataset of options.datasets) {
      const skipped: SkippedTask[] = [...(dataset.refused ?? [])];
      const runnable: Runnable[] = [];
      for (const harbor of dataset.tasks) {
        const environment = taskEnvironment(
          harbor,
          options.hostCompatibleImages,
          options.internet,
          options.containerEngine,
        );
        if (environment.kind === 'skipped') {
          skipped.push({ task: harbor.name, reason: environment.reason });
          continue;
        }
        let container: ContainerImage | undefined;
        if (environment.kind === 'container') {
          try {
            container = await containerImageStep(
              run,
              dataset.name,
              harbor,
              environment.engine,
              environment.source,
            );
          } catch (error) {
            skipped.push({
              task: harbor.name,
              reason: `its container image could not be made: ${errorMessage(error)}`,
            });
            continue;
          }
        }
        runnable.push({
          task: harborLoadedTask(harbor),
          network: environment.network,
          internet: internetLabel(harbor, environment.network),
          container,
        });
      }
      // The stage `benchmark` under the benchmark's name: each model trial's episode is journaled once it has run.
      const spending = usesModel(agent)
        ? await StageSpending.open(
            run.directory,
            { stage: 'benchmark', label: dataset.name },
            config.budgets,
            (servedAs) => models.find((model) => model.servedAs === servedAs)?.endpoint.prices,
          )
        : null;
      report({
        kind: 'planned',
        benchmark: dataset.name,
        trials: runnable.length * labels.length * options.trials,
        skipped,
        internet: runnable.map(({ task, internet }) => ({ task: task.manifest.id, internet })),
      });
      const trials = await runStudy(
        {
          plan: (work) =>
            runnable.flatMap(({ task, network, internet, container }) =>
              labels.flatMap((label) =>
                Array.from({ length: options.trials }, (_, trial) => {
                  const identity: TrialIdentity = {
                    benchmark: dataset.name,
                    task,
                    agent,
                    label,
                    trial,
                    samplingSeed: config.seed + trial,
                    dataSeed: taskDataSeed(seeds, task.manifest.id),
                    internet,
                    ...(container ? { container } : {}),
                  };
                  const model = usesModel(agent) ? served!.models.get(label)! : null;
                  const context = { network, model, concurrency, backend: session.episodes, spending };
                  return work.track(
                    withInfrastructureRetries(identity, (attempt) =>
                      verifiedTrial(work, run, attempt, context, report),
                    ),
                  );
                }),
              ),
            ),
          summarise: (verified) => Promise.all(verified),
        },
        // A model's trial is checked against the budgets as it would start, its slot held (exit 3 when one is spent).
        new WorkRunner(run, pools, {
          beforeWork: (kind) => (kind === 'trial' ? spending?.beforeWork('executor') : undefined),
        }),
      );
      const reference = usesModel(agent) ? labels[0]! : null;
      const summary: BenchmarkSummary = {
        benchmark: dataset.name,
        sources: dataset.sources,
        agent,
        trialsPerTask: options.trials,
        reference,
        standIn: served ? ([...served.models.values()][0]?.standIn ?? null) : null,
        tasks: runnable.map(({ task }) => task.manifest.id),
        skipped,
        figures: benchmarkFigures(trials, { ...BOOTSTRAP, seed: config.seed, reference }),
        official: officialFigures(trials),
        perTask: taskRows(trials),
        trials,
        bootstrap: { ...BOOTSTRAP, seed: config.seed },
      };
      await BenchmarkSummaryRecord.write(
        run.path(benchmarkPath(dataset.name, `summary-${agent}.json`)),
        summary,
      );
      summaries.push(summary);
    }
  } finally {
    await pools.close();
    await served?.close();
  }
  return summaries;
}

/**
 * Refuses a benchmark whose tasks would run without a sandbox (the run configuration's `sandbox: unsandboxed`): a
 * bubblewrap trial's `/tests`, `/logs/verifier`, `/solution` and state paths (`/app`) are folders of the trial bound
 * at those paths inside its sandbox, and on the host they are missing, or the host's own. Tasks that run in their own
 * container are not concerned.
 */
function refuseUnsandboxed(options: BenchmarkRunOptions): void {
  const onHost = options.datasets.flatMap((dataset) =>
    dataset.tasks
      .filter(
        (task) =>
          taskEnvironment(task, options.hostCompatibleImages, options.internet, options.containerEngine)
            .kind === 'host',
      )
      .map((task) => `${dataset.name}/${task.name}`),
  );
  if (onHost.length === 0) return;
  const named =
    onHost.length > 5 ? `${onHost.slice(0, 5).join(', ')} and ${onHost.length - 5} more` : onHost.join(', ');
  throw new UserError(
    `the run configuration sets sandbox: unsandboxed, and ${named} would run on the host, where the paths Harbor's verifier, oracle and state_paths use (/tests, /logs/verifier, /solution, /app…) are not the trial's: set sandbox: bubblewrap in the run configuration, or run tasks that have an image of their own in containers (--container-engine docker)`,
  );
}

interface Runnable {
  task: LoadedTask;
  network: EpisodeNetwork;
  /** Its network as trials record it (`internetLabel`). */
  internet: string;
  /** The task's own image, when it runs in a container instead of bubblewrap. */
  container: ContainerImage | undefined;
}

/** How many times a trial lost to infrastructure (`infrastructureLoss`) is run again before it is counted apart. */
const INFRASTRUCTURE_RETRIES = 2;

/**
 * Runs a trial, and again while infrastructure lost it (an engine's error, a harness that crashed before its first
 * model call), at most INFRASTRUCTURE_RETRIES times, each attempt a step of its own so that a resumed benchmark redoes
 * none. The last attempt is the trial's, marked with its loss when it was lost too.
 */
async function withInfrastructureRetries(
  identity: TrialIdentity,
  attempt: (identity: TrialIdentity) => Promise<VerifiedTrial>,
): Promise<VerifiedTrial> {
  let result = await attempt(identity);
  let retries = 0;
  while (infrastructureLoss(result) !== null && retries < INFRASTRUCTURE_RETRIES) {
    retries++;
    result = await attempt({ ...identity, attempt: retries });
  }
  return {
    ...result,
    schemaVersion: 2,
    lostToInfrastructure: infrastructureLoss(result),
    infrastructureRetries: retries,
  };
}

/**
 * One attempt at a trial: in a container, one piece of work from the agent's first command to the verifier's last;
 * in bubblewrap, the trial, then its verification over what the agent left.
 */
async function verifiedTrial(
  work: WorkRunner,
  run: Run<RunConfig>,
  identity: TrialIdentity,
  context: TrialContext,
  report: (event: BenchmarkProgress) => void,
): Promise<VerifiedTrial> {
  if (identity.container) {
    try {
      return await work.submit(containerTrialWork(run, identity, context));
    } finally {
      report({ kind: 'finished', what: 'trial' });
      report({ kind: 'finished', what: 'verification' });
    }
  }
  let ran: BenchmarkTrial;
  try {
    ran = await work.submit(trialWork(run, identity, context));
  } finally {
    report({ kind: 'finished', what: 'trial' });
  }
  try {
    return await work.submit(verificationWork(run, identity, ran, context.network));
  } finally {
    report({ kind: 'finished', what: 'verification' });
  }
}

/**
 * The registry's generations named (default all), as the evaluation serves them; a run without any (no loop has run)
 * benchmarks the configured executor's model as `base`.
 */
function generationsOf(
  config: RunConfig,
  registry: ModelRegistry,
  names: string[] | undefined,
): EvaluatedModel[] {
  const executor = config.roles.executor;
  if (!names && registry.list().length === 0) {
    return [{ name: 'base', servedAs: executor.model, parent: null, endpoint: executor }];
  }
  return generationModels(config, names ? names.map((name) => registry.require(name)) : registry.list());
}
