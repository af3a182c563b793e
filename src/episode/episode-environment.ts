import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { HarnessPlace } from '../harness/launch-qwen-code.js';
import { episodePath } from '../store/run-paths.js';
import type { PreparedEpisode } from './episode-prepare.js';
import type { EpisodeProxies } from './episode-proxies.js';
import { processGpuPool, type GpuLease } from './gpu-pool.js';
import type { IsolatedCommand, Isolation } from './isolation.js';
import { EPISODE_DEFAULTS, type EpisodeOptions } from './episode-spec.js';
import { Sandbox } from './sandbox.js';
import { removeTree } from '../store/remove-tree.js';
import { handBackWorkdir, type TrialEnvironment } from './trial-environment.js';

/**
 * Folders of this package that hold answers: every suite's oracles and generators, the bundled benchmark's tests and
 * solutions, and the reference solutions of the test tree. Agents never see them, whichever task they work on.
 */
const PACKAGE_DIRECTORIES_WITH_ANSWERS = ['suites', 'benchmarks', 'test'].map((folder) =>
  fileURLToPath(new URL(`../../${folder}`, import.meta.url)),
);

/** Where the harness's own settings are put in a trial's environment (its QWEN_HOME). */
const HARNESS_HOME_INSIDE = '/tmp/mass-harness-home';

/**
 * Where an episode's harness runs, whichever environment it is: the `Isolation` it runs in, where its home and guard
 * are, how its command is run there, and what the record says the agents saw.
 */
export interface EpisodeEnvironment {
  isolation: Isolation;
  /** How the progress line names it. */
  label: string;
  /** The harness's place in it, without the proxy (`isolation.proxyBaseUrl`). */
  place: Omit<HarnessPlace, 'proxyBaseUrl'>;
  /** What the harness's command gets besides its own: who runs it, variables under its own, limits. */
  command: Pick<IsolatedCommand, 'user' | 'env' | 'limits'>;
  /** The workspace and the home as the agents saw them (the record's `sandbox`). */
  agentPaths: { workspacePath: string; homePath: string };
  /** The GPU the episode holds, if any. */
  gpu: number | null;
  /** Before the harness starts, once its settings are in its home. */
  beforeHarness(): Promise<void>;
  /** Once the harness has ended: what the agents left is in the episode's workspace. */
  afterHarness(): Promise<void>;
}

/**
 * The environment phase around `work`: a GPU taken when the options offer some, then the episode's own sandbox
 * (bubblewrap, or the host's processes with `--no-sandbox`), or the trial's environment the options give. The sandbox
 * is closed and the GPU given back when `work` ends; a trial's environment is its caller's to remove.
 */
export async function withEpisodeEnvironment<T>(
  options: EpisodeOptions,
  episode: PreparedEpisode,
  proxies: EpisodeProxies,
  work: (environment: EpisodeEnvironment) => Promise<T>,
): Promise<T> {
  const gpu = await leaseGpu(options, episode);
  try {
    if (options.environment !== undefined) {
      return await work(await inTrialEnvironment(options.environment, options, episode, gpu));
    }
    const sandbox = await openSandbox(options, episode, proxies, gpu);
    try {
      return await work(ownSandbox(sandbox, options, episode, gpu));
    } finally {
      await sandbox.close();
    }
  } finally {
    gpu?.release();
  }
}

async function leaseGpu(options: EpisodeOptions, episode: PreparedEpisode): Promise<GpuLease | null> {
  if (options.gpus === undefined || options.gpus.length === 0) return null;
  const pool = options.gpuPool ?? processGpuPool;
  if (options.gpus.every((index) => pool.inUse.includes(index))) {
    episode.log(`waiting for a GPU (${options.gpus.join(', ')} in use)`);
  }
  return pool.acquire(options.gpus);
}

/** The episode's own sandbox over its workspace and home, hiding the task's suite, the run and every answer. */
function openSandbox(
  options: EpisodeOptions,
  episode: PreparedEpisode,
  proxies: EpisodeProxies,
  gpu: GpuLease | null,
): Promise<Sandbox> {
  const { outDir, task } = episode;
  return Sandbox.open({
    mode: options.sandbox ?? 'bubblewrap',
    workspace: episode.workspaceDir,
    stateDirectory: episodePath(outDir, 'sandbox'),
    homeDirectory: episodePath(outDir, 'home'),
    readOnlyPaths: episode.protectedAssets.map((asset) => asset.path),
    ...(options.statePaths && options.statePaths.length > 0
      ? { placedDirectories: options.statePaths.map((path) => ({ ...path, writable: true })) }
      : {}),
    hiddenDirectories: [
      dirname(task.dir),
      dirname(outDir),
      ...PACKAGE_DIRECTORIES_WITH_ANSWERS,
      ...(options.hiddenDirectories ?? []),
      ...(options.sandboxHide ?? []),
    ],
    readableDirectories: episode.qwenCode.readableDirectories,
    proxySocketPath: proxies.socketPath,
    ...(proxies.egress === null ? {} : { egressSocketPath: proxies.egress.socketPath }),
    ...(gpu === null ? {} : { gpu: gpu.index }),
  });
}

/** The harness in the episode's own sandbox: its home mounted, under every limit the options set. */
function ownSandbox(
  sandbox: Sandbox,
  options: EpisodeOptions,
  episode: PreparedEpisode,
  gpu: GpuLease | null,
): EpisodeEnvironment {
  return {
    isolation: sandbox,
    label: sandbox.mode,
    place: {
      homeDirectory: sandbox.homeDirectory,
      homeInside: sandbox.homeInside,
      isolated: sandbox.kind === 'bubblewrap',
      guardDirectory: episodePath(episode.outDir, 'sandbox'),
      pathInside: (hostPath) => sandbox.pathInside(hostPath),
    },
    command: {
      limits: {
        wallClockSeconds: episodeTimeoutSeconds(options),
        cpuSeconds: options.cpuSeconds,
        memoryBytes: options.memoryBytes ?? 8 * 1024 ** 3,
        processes: options.processLimit,
        diskBytes: options.diskBytes,
      },
    },
    agentPaths: { workspacePath: sandbox.workdir, homePath: sandbox.homeInside },
    gpu: gpu?.index ?? null,
    beforeHarness: async () => {},
    afterHarness: async () => {},
  };
}

/**
 * The harness in a trial's environment: its settings put in (owned by the agent's user), at the environment's
 * working folder; then that folder handed back into the episode's workspace (no link, no set-user-ID bit), so that
 * the episode's record shows what the agents left.
 */
async function inTrialEnvironment(
  environment: TrialEnvironment,
  options: EpisodeOptions,
  episode: PreparedEpisode,
  gpu: GpuLease | null,
): Promise<EpisodeEnvironment> {
  const home = episodePath(episode.outDir, 'home');
  await mkdir(home, { recursive: true });
  const shared = environment.sharedDirectory;
  const user = options.environmentUser ?? null;
  return {
    isolation: environment,
    label: `${environment.kind} trial environment`,
    place: {
      homeDirectory: home,
      homeInside: HARNESS_HOME_INSIDE,
      isolated: true,
      guardDirectory: shared.host,
      pathInside: (hostPath) =>
        hostPath === shared.host || hostPath.startsWith(`${shared.host}/`)
          ? join(shared.inside, relative(shared.host, hostPath))
          : hostPath,
    },
    command: {
      user,
      env: options.environmentEnv ?? {},
      limits: { wallClockSeconds: episodeTimeoutSeconds(options) },
    },
    agentPaths: { workspacePath: environment.workdir, homePath: HARNESS_HOME_INSIDE },
    gpu: gpu?.index ?? null,
    beforeHarness: () => environment.putFiles(home, HARNESS_HOME_INSIDE, user),
    afterHarness: async () => {
      await removeTree(episode.workspaceDir);
      await handBackWorkdir(environment, episode.workspaceDir);
    },
  };
}

/** Wall-clock limit of the whole harness run (default `EPISODE_DEFAULTS.timeoutSeconds`). */
export function episodeTimeoutSeconds(options: EpisodeOptions): number {
  return options.timeoutSeconds ?? EPISODE_DEFAULTS.timeoutSeconds;
}
