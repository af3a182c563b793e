import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { dataSeeds, taskDataSeed } from '../config/data-seeds.js';
import { episodeSettings } from '../episode/episode-settings.js';
import { evaluationConfig } from '../config/evaluation-settings.js';
import type { RunConfig } from '../config/run-config.js';
import type { EpisodeOptions } from '../episode/run-episode.js';
import { generationModels, type EvaluatedModel } from '../evaluate/evaluation-plan.js';
import { settleAll } from '../evaluate/evaluate-run.js';
import { serveEvaluation, type ServedEvaluation, type ServedModel } from '../evaluate/serve-evaluation.js';
import { errorMessage, UserError } from '../errors.js';
import type { ContainerImage } from '../episode/sandbox-container.js';
import { TRIAL_EGRESS_SOCKET, type TrialEnvironment } from '../episode/trial-environment.js';
import { BubblewrapTrialEnvironment, statePathFolder } from '../episode/trial-environment-bubblewrap.js';
import { ContainerTrialEnvironment } from '../episode/trial-environment-container.js';
import { prepareQwenCode } from '../harness/launch-qwen-code.js';
import { startEgressProxy } from '../proxy/egress-proxy.js';
import { materializeWorkspace } from '../tasks/materialize.js';
import { egressAllowance, type EpisodeNetwork } from '../tasks/task-network.js';
import type { RunSession } from '../session/run-session.js';
import { Semaphore } from '../model/concurrency.js';
import { localEpisodeBackend } from '../queue/episode-backend.js';
import { runEpisodeThroughOutages, type OutageGate } from '../search/outage-gate.js';
import { episodePath } from '../store/run-paths.js';
import type { Run } from '../store/run-store.js';
import { harborLoadedTask } from '../tasks/harbor-loaded-task.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { ModelRegistry } from '../train/registry.js';
import { benchmarkFigures, taskRows } from './benchmark-figures.js';
import {
  BenchmarkSummaryRecord,
  BenchmarkTrial,
  benchmarkPath,
  usesModel,
  VerifiedTrial,
  type BenchmarkAgent,
  type BenchmarkSummary,
  type SkippedTask,
} from './benchmark-records.js';
import { containerImageStep } from './container-images.js';
import { infrastructureLoss, officialFigures } from './official-figures.js';
import { runReferenceAgent, type ReferenceRun } from './reference-agents.js';
import { internetLabel, taskEnvironment, type InternetPolicy } from './task-environment.js';
import { unstartedVerification, verifyTrial } from './verifier.js';

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
 * episodes wait out model-server outages as the evaluation's do. Tasks that cannot run here are listed with the
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
  const gateOf = (model: ServedModel) => pools.gate(model);
  const slots = new Semaphore(evaluationConfig(config).concurrency.episodes);
  const verifierSlots = new Semaphore(2);
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
      report({
        kind: 'planned',
        benchmark: dataset.name,
        trials: runnable.length * labels.length * options.trials,
        skipped,
        internet: runnable.map(({ task, internet }) => ({ task: task.manifest.id, internet })),
      });
      const work: Array<Promise<VerifiedTrial>> = [];
      for (const { task, network, internet, container } of runnable) {
        for (const label of labels) {
          for (let trial = 0; trial < options.trials; trial++) {
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
            work.push(
              withInfrastructureRetries(identity, async (identity) => {
                const release = await slots.acquire();
                if (identity.container) {
                  // One environment from the agent's first command to the verifier's last: one step.
                  try {
                    return await containerTrialStep(run, identity, {
                      network,
                      model: usesModel(agent) ? served!.models.get(label)! : null,
                      gateOf,
                    });
                  } finally {
                    release();
                    report({ kind: 'finished', what: 'trial' });
                    report({ kind: 'finished', what: 'verification' });
                  }
                }
                let ran: BenchmarkTrial;
                try {
                  ran = await trialStep(run, identity, () => {
                    if (!usesModel(agent)) return referenceTrial(run, identity, network);
                    const model = served!.models.get(label)!;
                    return modelTrial(run, identity, { model, gate: gateOf(model), network, options });
                  });
                } finally {
                  release();
                  report({ kind: 'finished', what: 'trial' });
                }
                const releaseVerifier = await verifierSlots.acquire();
                try {
                  return await verificationStep(run, identity, ran, network);
                } finally {
                  releaseVerifier();
                  report({ kind: 'finished', what: 'verification' });
                }
              }),
            );
          }
        }
      }
      const trials = await settleAll(work);
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

interface TrialIdentity {
  /** The task's own image, when it runs in a container. */
  container?: ContainerImage;
  /** 0, or the how-manieth time the trial is run again after infrastructure lost it: a step of its own. */
  attempt?: number;
  benchmark: string;
  task: LoadedTask;
  agent: BenchmarkAgent;
  label: string;
  trial: number;
  samplingSeed: number;
  dataSeed: number;
  /** The trial's network, as its record names it (`internetLabel`). */
  internet: string;
}

/** `benchmarks/<benchmark>/<trial|verify>/<agent>/<label>/<task>/<trial>`: a trial's or a verification's step. */
function stepKey(identity: TrialIdentity, kind: 'trial' | 'verify'): string {
  const { agent, label, task, trial } = identity;
  const retry = identity.attempt ? `/retry-${identity.attempt}` : '';
  return `${benchmarkPath(identity.benchmark)}/${kind}/${agent}/${label}/${task.manifest.id}/${trial}${retry}`;
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

function trialId(identity: TrialIdentity): string {
  return `${identity.label}-${identity.task.manifest.id}-${identity.trial}`;
}

/** A trial's folder: an episode folder for a model (`episodes/<id>`, as the queue's jobs require), else `trials/<id>`. */
function trialDir(identity: TrialIdentity): string {
  const folder = usesModel(identity.agent) ? 'episodes' : 'trials';
  return benchmarkPath(identity.benchmark, folder, `${identity.agent}-${trialId(identity)}`);
}

function trialStep(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  work: () => Promise<BenchmarkTrial>,
): Promise<BenchmarkTrial> {
  return run.step(stepKey(identity, 'trial'), work, { output: BenchmarkTrial });
}

function trialRecord(
  identity: TrialIdentity,
  outcome: Pick<BenchmarkTrial, 'status' | 'failure' | 'outputTokens' | 'delegations' | 'wallSeconds'>,
): BenchmarkTrial {
  return {
    schemaVersion: 2,
    kind: 'benchmark-trial',
    benchmark: identity.benchmark,
    task: identity.task.manifest.id,
    agent: identity.agent,
    label: identity.label,
    trial: identity.trial,
    samplingSeed: identity.samplingSeed,
    dir: trialDir(identity),
    internet: identity.internet,
    ...outcome,
  };
}

/** Oracle or nop in bubblewrap: a fresh workspace and state paths, the trial's environment over them. */
async function referenceTrial(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  network: EpisodeNetwork,
): Promise<BenchmarkTrial> {
  const harbor = identity.task.harbor!;
  const dir = run.path(trialDir(identity));
  await rm(dir, { recursive: true, force: true });
  await rm(run.path(environmentRoot(identity)), { recursive: true, force: true });
  await materializeWorkspace(identity.task, {
    seed: identity.dataSeed,
    workspaceDir: join(dir, 'workspace'),
  });
  const environment = await bubblewrapEnvironment(run, identity, join(dir, 'workspace'));
  try {
    const outcome = await withEgress(run, environment, network, join(dir, 'egress.jsonl'), () =>
      runReferenceAgent({ agent: identity.agent as 'oracle' | 'nop', task: harbor, environment }),
    );
    if (outcome.output !== '') await writeFile(join(dir, 'agent-output.txt'), outcome.output);
    return trialRecord(identity, { ...withoutOutput(outcome), outputTokens: 0, delegations: 0 });
  } finally {
    await environment.remove();
  }
}

function withoutOutput(outcome: ReferenceRun): Omit<ReferenceRun, 'output'> {
  const { output: _output, ...rest } = outcome;
  return rest;
}

/** Where a bubblewrap trial keeps its state paths and the folders put in: beside its trial's folder, of its own. */
function environmentRoot(identity: TrialIdentity): string {
  return benchmarkPath(identity.benchmark, 'environments', `${identity.agent}-${trialId(identity)}`);
}

/** The trial's bubblewrap environment over its workspace and its root (made again the same for the verifier). */
function bubblewrapEnvironment(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  workspace: string,
): Promise<BubblewrapTrialEnvironment> {
  const harbor = identity.task.harbor!;
  return BubblewrapTrialEnvironment.create({
    mode: run.config.sandbox,
    workspace,
    root: run.path(environmentRoot(identity)),
    statePaths: harbor.statePaths,
    env: harbor.environmentEnv,
    hiddenDirectories: [run.directory],
  });
}

/**
 * The task's network for a command that is not the harness's (the oracle's, the verifier's): the same egress proxy,
 * allowance (an allow-list, or every public host) and run configuration's private destinations the agent gets,
 * listening in the environment's socket folder while `work` runs; none without one.
 */
async function withEgress<T>(
  run: Run<RunConfig>,
  environment: TrialEnvironment,
  network: EpisodeNetwork,
  logFile: string,
  work: () => Promise<T>,
): Promise<T> {
  if (network === false) return work();
  const egress = await startEgressProxy({
    allow: egressAllowance(network),
    privateDestinations: run.config.network?.privateDestinations ?? [],
    socketPath: join(environment.socketDirectory, TRIAL_EGRESS_SOCKET),
    logFile,
  });
  try {
    return await work();
  } finally {
    await egress.close();
    await rm(join(environment.socketDirectory, TRIAL_EGRESS_SOCKET), { force: true });
  }
}

/** The container's name: one per trial of this run, so that a killed run's leftover is found and removed. */
function containerName(run: Run<RunConfig>, identity: TrialIdentity): string {
  const hash = createHash('sha256')
    .update(`${run.directory}\0${stepKey(identity, 'trial')}`)
    .digest('hex');
  return `mass-trial-${hash.slice(0, 20)}`;
}

/**
 * A trial in a container of the task's image, Harbor's way, as one step: the container made from the image, the
 * agent (the model's harness, the oracle's solve.sh, or nop) then the verifier in it, `/logs/verifier` handed back,
 * the container removed. A run killed before the step ends runs it again from the start: the container it left is
 * removed by name first (its state is the agent's half-done work, which the verifier must never see).
 */
function containerTrialStep(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  context: { network: EpisodeNetwork; model: ServedModel | null; gateOf: (model: ServedModel) => OutageGate },
): Promise<VerifiedTrial> {
  return run.step(
    stepKey(identity, 'verify'),
    async () => {
      const harbor = identity.task.harbor!;
      const container = identity.container!;
      const dir = run.path(trialDir(identity));
      await rm(dir, { recursive: true, force: true });
      await rm(run.path(environmentRoot(identity)), { recursive: true, force: true });
      const qwenCode = context.model === null ? null : await prepareQwenCode({ guarded: true });
      let environment: ContainerTrialEnvironment;
      try {
        environment = await ContainerTrialEnvironment.create({
          engine: container.engine,
          image: container.image,
          name: containerName(run, identity),
          stateDirectory: run.path(environmentRoot(identity)),
          readableDirectories: qwenCode?.readableDirectories ?? [],
          env: harbor.environmentEnv,
          cpus: harbor.cpus,
          memoryBytes: harbor.memoryBytes,
        });
      } catch (error) {
        await mkdir(dir, { recursive: true });
        const failure = `the trial's container could not be started: ${errorMessage(error)}`;
        return {
          ...trialRecord(identity, {
            status: 'failed',
            failure,
            outputTokens: 0,
            delegations: 0,
            wallSeconds: 0,
          }),
          verification: unstartedVerification(failure),
        };
      }
      try {
        let trial: BenchmarkTrial;
        if (context.model === null) {
          await mkdir(dir, { recursive: true });
          const outcome = await withEgress(run, environment, context.network, join(dir, 'egress.jsonl'), () =>
            runReferenceAgent({ agent: identity.agent as 'oracle' | 'nop', task: harbor, environment }),
          );
          if (outcome.output !== '') await writeFile(join(dir, 'agent-output.txt'), outcome.output);
          await environment.getFiles(environment.workdir, join(dir, 'workspace'));
          trial = trialRecord(identity, { ...withoutOutput(outcome), outputTokens: 0, delegations: 0 });
        } else {
          trial = await modelTrial(run, identity, {
            model: context.model,
            gate: context.gateOf(context.model),
            network: context.network,
            environment,
          });
        }
        await rm(run.path(verifierDir(identity)), { recursive: true, force: true });
        const verification = await withEgress(
          run,
          environment,
          context.network,
          run.path(verifierDir(identity), 'egress.jsonl'),
          () => verifyTrial({ task: harbor, environment, verifierDir: run.path(verifierDir(identity)) }),
        );
        return { ...trial, verification };
      } finally {
        await environment.remove();
      }
    },
    { output: VerifiedTrial },
  );
}

function verifierDir(identity: TrialIdentity): string {
  return benchmarkPath(identity.benchmark, 'verifier', `${identity.agent}-${trialId(identity)}`);
}

/** The generation's model works the bare instruction in an episode, through the configured back-end. */
async function modelTrial(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  context: {
    model: ServedModel;
    gate: OutageGate;
    network: EpisodeNetwork;
    /** The queue, for a trial in bubblewrap; a container trial runs here, in its environment. */
    options?: BenchmarkRunOptions;
    environment?: ContainerTrialEnvironment;
  },
): Promise<BenchmarkTrial> {
  const { model } = context;
  const harbor = identity.task.harbor!;
  const dir = trialDir(identity);
  const settings = episodeSettings(run.config);
  const options: EpisodeOptions = {
    ...settings,
    taskDir: identity.task.dir,
    teacher: false,
    singleAgent: identity.agent === 'single-agent',
    model: model.model,
    baseUrl: model.baseUrl,
    apiKey: model.apiKey,
    seed: identity.samplingSeed,
    dataSeed: identity.dataSeed,
    outDir: run.path(dir),
    hiddenDirectories: [run.directory],
    timeoutSeconds: harbor.agentTimeoutSec,
    ...(harbor.memoryBytes === null ? {} : { memoryBytes: harbor.memoryBytes }),
    ...(context.network === false ? {} : { network: context.network }),
    ...(context.environment
      ? {
          environment: context.environment,
          environmentUser: harbor.agentUser,
          environmentEnv: harbor.environmentEnv,
        }
      : {
          statePaths: harbor.statePaths.map((inside) => ({
            inside,
            host: statePathFolder(run.path(environmentRoot(identity)), inside),
          })),
        }),
  };
  // A queue's job carries no environment: a container trial's lives on this machine, and runs here.
  const backend = context.environment
    ? localEpisodeBackend
    : (context.options?.session.episodes ?? localEpisodeBackend);
  if (!context.environment) await rm(run.path(environmentRoot(identity)), { recursive: true, force: true });
  const { record } = await runEpisodeThroughOutages(
    context.gate,
    { id: trialId(identity), outDir: options.outDir },
    () => backend.run({ stepKey: stepKey(identity, 'trial'), apiKeyEnv: model.apiKeyEnv, options }),
  );
  return trialRecord(identity, {
    status: record.status === 'success' ? 'finished' : (record.failure?.kind ?? 'failed'),
    failure: record.failure ? `${record.failure.kind}: ${record.failure.detail}` : null,
    outputTokens: record.usage.total.completionTokens,
    delegations: record.delegations,
    wallSeconds: Math.round(record.timings.durationMs / 10) / 100,
  });
}

/** A bubblewrap trial's verification: its environment made again over the folders the agent left. */
function verificationStep(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  trial: BenchmarkTrial,
  network: EpisodeNetwork,
): Promise<VerifiedTrial> {
  return run.step(
    stepKey(identity, 'verify'),
    async () => {
      const workspace = usesModel(identity.agent)
        ? episodePath(run.path(trial.dir), 'workspace')
        : join(run.path(trial.dir), 'workspace');
      const environment = await bubblewrapEnvironment(run, identity, workspace);
      try {
        // Emptied before the egress proxy opens its log there.
        await rm(run.path(verifierDir(identity)), { recursive: true, force: true });
        const verification = await withEgress(
          run,
          environment,
          network,
          run.path(verifierDir(identity), 'egress.jsonl'),
          () =>
            verifyTrial({
              task: identity.task.harbor!,
              environment,
              verifierDir: run.path(verifierDir(identity)),
            }),
        );
        return { ...trial, verification };
      } finally {
        await environment.remove();
      }
    },
    { output: VerifiedTrial },
  );
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
