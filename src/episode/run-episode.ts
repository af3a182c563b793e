import { resolve } from 'node:path';

import { UserError } from '../errors.js';
import { captureQwenCodeOutput } from '../harness/launch-qwen-code.js';
import type { HarnessNode } from '../harness/harness-node.js';
import type { HarnessProfile, QwenSamplingSettings } from '../harness/qwen-settings.js';
import type { UpstreamRetryPolicy } from '../proxy/upstream-retry.js';
import { episodePath } from '../store/run-paths.js';
import type { EpisodeNetwork } from '../tasks/task-network.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { workflowHash } from '../workflow/render.js';
import { collectEpisode } from './episode-collect.js';
import { withEpisodeEnvironment } from './episode-environment.js';
import { runHarness, type HarnessRun } from './episode-harness.js';
import { dataSeed, prepareEpisode } from './episode-prepare.js';
import { startEpisodeProxies } from './episode-proxies.js';
import { EpisodeRecord } from './episode-record.js';
import type { GpuPool } from './gpu-pool.js';
import type { SandboxMode } from './sandbox.js';
import type { TrialEnvironment } from './trial-environment.js';

export interface EpisodeOptions {
  taskDir: string;
  /** The team workflow rendered into the prompt; absent for a bare-task episode. */
  workflow?: TeamDesign;
  /** Append the teacher directive (while collecting training data). */
  teacher?: boolean;
  model: string;
  /** The model server, OpenAI style, ending in `/v1`. */
  baseUrl: string;
  /** The upstream key; held by the episode's proxy, never given to the harness or written anywhere. */
  apiKey?: string;
  /** The sampling seed: the model's seed on every call of the episode. Vary it to get another run of the same task. */
  seed: number;
  /**
   * The data seed: the task's generator draws the workspace's data (and the grader its planted truth) from it. One per
   * task and run, the same across the runs that are compared or collected; default: the sampling seed.
   */
  dataSeed?: number;
  /** The episode directory; its name is the episode's id. */
  outDir: string;
  /** Wall-clock limit of the whole harness run (default 3600 s). */
  timeoutSeconds?: number;
  /** CPU seconds of the harness and everything it starts (default: the sandbox's, `defaultCpuSeconds`). */
  cpuSeconds?: number;
  /** Resident memory of the harness and everything it starts (default 8 GiB). */
  memoryBytes?: number;
  /** Processes of the harness's tree at once (default: the sandbox's, `DEFAULT_PROCESS_LIMIT`). */
  processLimit?: number;
  /** Disk the workspace and the home may take (default: the sandbox's, `DEFAULT_DISK_BYTES`). */
  diskBytes?: number;
  /** Completion tokens per model call (default 32,768). */
  maxOutputTokens?: number;
  /** Completion tokens of the whole episode; past it the proxy refuses calls (default: no budget). */
  outputBudget?: number;
  sampling?: Partial<Omit<QwenSamplingSettings, 'seed' | 'maxTokens'>>;
  contextWindowSize?: number;
  /** `unsandboxed` only where bubblewrap cannot run; the CLI's `--no-sandbox`. */
  sandbox?: SandboxMode;
  /**
   * Stop the harness at the first failed model call (default true): the episode cannot succeed any more, and
   * harnesses retry server errors on their own for a minute or more.
   */
  stopOnModelError?: boolean;
  /** Further directories to hide from the agents (the run directory, other suites). */
  hiddenDirectories?: string[];
  /**
   * Host paths (folders or files) the configuration hides from the agents (`sandboxHide`), beside /root, /home and
   * /run, which the sandbox always hides.
   */
  sandboxHide?: string[];
  /** How the episode's proxy retries a failing model server (default `DEFAULT_UPSTREAM_RETRY`). */
  retry?: Partial<UpstreamRetryPolicy>;
  /** The harness without its \`agent\` tool: the orchestrator cannot delegate (the single-agent baseline). */
  singleAgent?: boolean;
  /** Which of qwen-code's tools and skills the agents are offered (default `lean`; `stock`: qwen-code's defaults). */
  harnessProfile?: HarnessProfile;
  /** The served model takes image input (the executor endpoint's `images`): the harness is told so. */
  images?: boolean;
  /**
   * GPUs of the host the episode may use (the configuration's `sandboxGpus`): it takes one of them for itself from
   * `gpuPool` before its sandbox opens, waiting while all are taken, and gives it back when the sandbox closes.
   * Default none.
   */
  gpus?: number[];
  /** Where GPUs are taken from (default `processGpuPool`, shared by every episode of this process). */
  gpuPool?: GpuPool;
  /** The Node that runs the harness (default: `harnessNode()`); benchmarks compare it with this process's. */
  harnessNode?: HarnessNode;
  /** Progress lines (stage names); default none. */
  log?: (message: string) => void;
  /**
   * What the agents may reach beyond the model, in place of the task's own `environment.network`: a benchmark's
   * allow-list, or every public host, for a Harbor task that asks for the internet. Default: the task's.
   */
  network?: EpisodeNetwork;
  /**
   * Destinations whose loopback, private or link-local address the agents may reach (the run configuration's
   * `network.privateDestinations`; see `PrivateDestinations`). A task's own allow-list never opens one. Default none.
   */
  privateDestinations?: string[];
  /**
   * Folders outside the workspace the agents may write, bound read-write at their paths (a benchmark task's
   * `state_paths`, kept for its verifier): `inside` an absolute path, `host` a folder the episode's caller owns.
   */
  statePaths?: Array<{ inside: string; host: string }>;
  /**
   * Run the harness in this trial's environment (a benchmark task's own container) instead of a sandbox of the
   * episode's own: the environment holds the task's files (nothing is materialized), the harness starts at its
   * working folder as `environmentUser`, and its working folder is handed back into the episode's workspace
   * afterwards, for the record. Not for a queue: the environment lives in this process.
   */
  environment?: TrialEnvironment;
  /** Who runs the harness in `environment` (a task's `[agent] user`); default the environment's own. */
  environmentUser?: string | null;
  /** Variables every command in `environment` gets (a task's `[environment.env]`). */
  environmentEnv?: Record<string, string>;
}

export interface EpisodeResult {
  record: EpisodeRecord;
  /** False when the directory already held this finished episode and nothing ran. */
  ran: boolean;
}

/**
 * One episode: a fresh workspace for the task and seed, the harness (qwen-code) in the sandbox talking to the model
 * through a recording proxy, then the outcome, the trajectories and the record, in five phases: prepare
 * (`episode-prepare.ts`), proxies (`episode-proxies.ts`), environment (`episode-environment.ts`), harness
 * (`episode-harness.ts`) and collect (`episode-collect.ts`). Re-running a finished episode
 * directory does nothing; a half-finished one is cleaned and run again; a directory holding anything else is
 * refused. The record's facts come from the proxy log, written by the host: agent code can write into the harness's
 * output, which is only captured (bounded) and cross-checked.
 */
export async function runEpisode(options: EpisodeOptions): Promise<EpisodeResult> {
  const outDir = resolve(options.outDir);
  const recordPath = episodePath(outDir, 'record');
  const existing = await EpisodeRecord.readIfPresent(recordPath);
  if (existing) {
    assertSameEpisode(existing, options, recordPath);
    return { record: existing, ran: false };
  }
  const episode = await prepareEpisode(options, outDir);
  const proxies = await startEpisodeProxies(options, episode);
  const output = captureQwenCodeOutput(outDir);
  let harnessRun: HarnessRun;
  try {
    harnessRun = await withEpisodeEnvironment(options, episode, proxies, (environment) =>
      runHarness(options, episode, proxies, environment, output),
    );
  } finally {
    await proxies.close();
    output.events.close();
    output.stderr.close();
  }
  const captured = { events: output.events.close(), stderr: output.stderr.close() };
  const record = await collectEpisode(options, episode, proxies, harnessRun, captured);
  await EpisodeRecord.write(recordPath, record);
  episode.log(`${record.status}${record.failure ? ` (${record.failure.kind})` : ''}`);
  return { record, ran: true };
}

function assertSameEpisode(existing: EpisodeRecord, options: EpisodeOptions, recordPath: string): void {
  const differences: string[] = [];
  if (existing.seed !== options.seed) differences.push(`sampling seed ${existing.seed}, not ${options.seed}`);
  if (existing.dataSeed !== dataSeed(options))
    differences.push(`data seed ${existing.dataSeed}, not ${dataSeed(options)}`);
  if (existing.model !== options.model) differences.push(`model "${existing.model}", not "${options.model}"`);
  if (existing.teacher !== (options.teacher ?? false)) differences.push(`teacher ${existing.teacher}`);
  const hash = options.workflow ? workflowHash(options.workflow) : null;
  if (existing.workflowHash !== hash)
    differences.push(`workflow ${existing.workflowHash ?? 'none'}, not ${hash ?? 'none'}`);
  if (differences.length > 0) {
    throw new UserError(
      `${recordPath} holds a finished episode with ${differences.join(', ')}: choose another output directory, or delete it to run again`,
    );
  }
}
