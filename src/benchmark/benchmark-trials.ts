import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { episodeSettings } from '../episode/episode-settings.js';
import type { RunConfig } from '../config/run-config.js';
import type { StageSpending } from '../cost/stage-spending.js';
import type { EpisodeOptions } from '../episode/run-episode.js';
import type { ServedModel } from '../evaluate/serve-evaluation.js';
import { errorMessage } from '../errors.js';
import type { ContainerImage } from '../episode/sandbox-container.js';
import { BubblewrapTrialEnvironment, statePathFolder } from '../episode/trial-environment-bubblewrap.js';
import { ContainerTrialEnvironment } from '../episode/trial-environment-container.js';
import { handBackWorkdir } from '../episode/trial-environment.js';
import { prepareQwenCode } from '../harness/launch-qwen-code.js';
import { materializeWorkspace } from '../tasks/materialize.js';
import type { EpisodeNetwork } from '../tasks/task-network.js';
import { localEpisodeBackend, type EpisodeBackend } from '../queue/episode-backend.js';
import { runEpisodeThroughOutages, type OutageGate } from '../search/outage-gate.js';
import { removeTree } from '../store/remove-tree.js';
import { episodePath } from '../store/run-paths.js';
import type { Run } from '../store/run-store.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { benchmarkTrialKey } from '../work/step-keys.js';
import type { WorkItem, WorkSlots } from '../work/work-item.js';
import {
  BenchmarkTrial,
  benchmarkPath,
  usesModel,
  VerifiedTrial,
  type BenchmarkAgent,
} from '../records/benchmark-records.js';
import { withEgress } from './trial-egress.js';
import { runReferenceAgent, type ReferenceRun } from './reference-agents.js';
import { unstartedVerification, verifyTrial } from './verifier.js';

/** One trial of a benchmark: which task, agent, label and seed, and its attempt after infrastructure losses. */
export interface TrialIdentity {
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
  return benchmarkTrialKey(identity.benchmark, kind, {
    agent,
    label,
    task: task.manifest.id,
    trial,
    ...(identity.attempt ? { attempt: identity.attempt } : {}),
  });
}

/** A trial's slots: its model server's episodes (a reference agent's: the reference pool), `limit` at a time. */
function trialSlots(model: ServedModel | null, limit: number): WorkSlots {
  return { pool: 'episodes', key: model?.baseUrl ?? 'reference-agents', limit };
}

/** Verifications at a time. */
const VERIFIER_SLOTS: WorkSlots = { pool: 'verifications', key: 'local', limit: 2 };

/** What a trial runs with: its network, its model (none: a reference agent), episodes at a time, the back-end. */
export interface TrialContext {
  network: EpisodeNetwork;
  model: ServedModel | null;
  concurrency: number;
  backend: EpisodeBackend;
  /** The stage `benchmark`'s spending: each model trial's episode is journaled once it has run. */
  spending?: StageSpending | null;
}

/**
 * A bubblewrap trial as work: the generation's model works the bare instruction in an episode through `backend`
 * (waiting out its server's outages), or the reference agent (oracle, nop) runs; its verification is other work.
 */
export function trialWork(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  context: TrialContext,
): WorkItem<typeof BenchmarkTrial> {
  const { model, network } = context;
  return {
    kind: 'trial',
    key: stepKey(identity, 'trial'),
    output: BenchmarkTrial,
    slots: trialSlots(model, context.concurrency),
    ...(model ? { server: model } : {}),
    perform: ({ gate }) =>
      model
        ? modelTrial(run, identity, {
            model,
            gate: gate!,
            network,
            backend: context.backend,
            spending: context.spending,
          })
        : referenceTrial(run, identity, network),
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

export function trialRecord(
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
  await removeTree(dir);
  await removeTree(run.path(environmentRoot(identity)));
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
export function containerTrialWork(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  context: Omit<TrialContext, 'backend'>,
): WorkItem<typeof VerifiedTrial> {
  return {
    kind: 'trial',
    key: stepKey(identity, 'verify'),
    output: VerifiedTrial,
    slots: trialSlots(context.model, context.concurrency),
    ...(context.model ? { server: context.model } : {}),
    perform: async ({ gate }) => {
      const harbor = identity.task.harbor!;
      const container = identity.container!;
      const dir = run.path(trialDir(identity));
      await removeTree(dir);
      await removeTree(run.path(environmentRoot(identity)));
      const qwenCode = context.model === null ? null : await prepareQwenCode({ guarded: true });
      let environment: ContainerTrialEnvironment;
      try {
        environment = await ContainerTrialEnvironment.create({
          engine: container.engine,
          image: container.image,
          name: containerName(run, identity),
          stateDirectory: run.path(environmentRoot(identity)),
          run: run.directory,
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
          await handBackWorkdir(environment, join(dir, 'workspace'));
          trial = trialRecord(identity, { ...withoutOutput(outcome), outputTokens: 0, delegations: 0 });
        } else {
          trial = await modelTrial(run, identity, {
            model: context.model,
            gate: gate!,
            network: context.network,
            environment,
            spending: context.spending,
          });
        }
        await removeTree(run.path(verifierDir(identity)));
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
  };
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
    backend?: EpisodeBackend;
    environment?: ContainerTrialEnvironment;
    spending?: StageSpending | null;
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
  const backend = context.environment ? localEpisodeBackend : (context.backend ?? localEpisodeBackend);
  if (!context.environment) await removeTree(run.path(environmentRoot(identity)));
  const { record } = await runEpisodeThroughOutages(
    context.gate,
    { id: trialId(identity), outDir: options.outDir },
    () => backend.run({ stepKey: stepKey(identity, 'trial'), apiKeyEnv: model.apiKeyEnv, options }),
  );
  await context.spending?.episode(stepKey(identity, 'trial'), record);
  return trialRecord(identity, {
    status: record.status === 'success' ? 'finished' : (record.failure?.kind ?? 'failed'),
    failure: record.failure ? `${record.failure.kind}: ${record.failure.detail}` : null,
    outputTokens: record.usage.total.completionTokens,
    delegations: record.delegations,
    wallSeconds: Math.round(record.timings.durationMs / 10) / 100,
  });
}

/** A bubblewrap trial's verification: its environment made again over the folders the agent left. */
export function verificationWork(
  run: Run<RunConfig>,
  identity: TrialIdentity,
  trial: BenchmarkTrial,
  network: EpisodeNetwork,
): WorkItem<typeof VerifiedTrial> {
  return {
    kind: 'verification',
    key: stepKey(identity, 'verify'),
    output: VerifiedTrial,
    slots: VERIFIER_SLOTS,
    perform: async () => {
      const workspace = usesModel(identity.agent)
        ? episodePath(run.path(trial.dir), 'workspace')
        : join(run.path(trial.dir), 'workspace');
      const environment = await bubblewrapEnvironment(run, identity, workspace);
      try {
        // Emptied before the egress proxy opens its log there.
        await removeTree(run.path(verifierDir(identity)));
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
  };
}
