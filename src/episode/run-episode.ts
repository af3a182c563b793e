import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { UserError } from '../errors.js';
import { summariseHarnessEvents } from '../harness/harness-events.js';
import type { HarnessNode } from '../harness/harness-node.js';
import type { HarnessTexts } from '../harness/harness-texts.js';
import { captureQwenCodeOutput, prepareQwenCode, qwenCodeCommand } from '../harness/launch-qwen-code.js';
import { QWEN_CODE_VERSION } from '../harness/qwen-code.js';
import {
  DEFAULT_HARNESS_PROFILE,
  type HarnessProfile,
  type QwenSamplingSettings,
} from '../harness/qwen-settings.js';
import { startEgressProxy, type EgressProxy } from '../proxy/egress-proxy.js';
import { readProxyLog, wasRetried, type ProxyLogRow } from '../proxy/log-row.js';
import { startRecordingProxy } from '../proxy/recording-proxy.js';
import type { UpstreamRetryPolicy } from '../proxy/upstream-retry.js';
import { sha256WorkspaceFile } from '../tasks/integrity.js';
import { loadTask } from '../tasks/load-task.js';
import { egressAllowance, type EpisodeNetwork } from '../tasks/task-network.js';
import { materializeWorkspace } from '../tasks/materialize.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { renderWorkflow, workflowHash } from '../workflow/render.js';
import { prepareEpisodeDirectory } from './episode-directory.js';
import { processGpuPool, type GpuLease, type GpuPool } from './gpu-pool.js';
import { episodeFacts } from './episode-facts.js';
import { EpisodeRecord } from './episode-record.js';
import { classifyOutcome } from './outcome.js';
import { episodePrompt } from './prompt.js';
import { isChatRow } from './request-provenance.js';
import { Sandbox, type SandboxMode } from './sandbox.js';
import type { ContainerImage } from './sandbox-container.js';
import { TRIAL_EGRESS_SOCKET, TRIAL_PROXY_SOCKET, type TrialEnvironment } from './trial-environment.js';
import { episodePath } from '../store/run-paths.js';

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
  /** Run the harness in a container of this image (a benchmark task's own) instead of bubblewrap. */
  container?: ContainerImage;
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
 * Folders of this package that hold answers: every suite's oracles and generators, the bundled benchmark's tests and
 * solutions, and the reference solutions of the test tree. Agents never see them, whichever task they work on.
 */
const PACKAGE_DIRECTORIES_WITH_ANSWERS = ['suites', 'benchmarks', 'test'].map((folder) =>
  fileURLToPath(new URL(`../../${folder}`, import.meta.url)),
);

/**
 * One episode: a fresh workspace for the task and seed, the harness (qwen-code) in the sandbox talking to the model
 * through a recording proxy, then the outcome, the trajectories and the record. Re-running a finished episode
 * directory does nothing; a half-finished one is cleaned and run again; a directory holding anything else is
 * refused. The record's facts come from the proxy log, written by the host: agent code can write into the harness's
 * output, which is only captured (bounded) and cross-checked.
 */
export async function runEpisode(options: EpisodeOptions): Promise<EpisodeResult> {
  const outDir = resolve(options.outDir);
  const episodeId = basename(outDir);
  const recordPath = episodePath(outDir, 'record');
  const existing = await EpisodeRecord.readIfPresent(recordPath);
  if (existing) {
    assertSameEpisode(existing, options, recordPath);
    return { record: existing, ran: false };
  }
  await prepareEpisodeDirectory(outDir, (message) => options.log?.(`episode ${episodeId}: ${message}`));

  const startedAt = new Date();
  const task = await loadTask(options.taskDir);
  const network: EpisodeNetwork = options.network ?? task.manifest.environment.network;
  const trialEnvironment = options.environment ?? null;
  const workspace =
    trialEnvironment === null
      ? await materializeWorkspace(task, {
          seed: dataSeed(options),
          workspaceDir: episodePath(outDir, 'workspace'),
        })
      : await emptyWorkspace(episodePath(outDir, 'workspace'));
  const prompt = episodePrompt({
    task: renderTaskPrompt(task, network),
    workflow: options.workflow ? renderWorkflow(options.workflow) : undefined,
    teacher: options.teacher,
    teacherDirective: task.teacherDirective ?? undefined,
  });
  await writeFile(episodePath(outDir, 'prompt'), prompt);

  // Unix socket paths are limited to 107 bytes: keep the proxy's socket in a short directory of its own.
  const socketDirectory = trialEnvironment?.socketDirectory ?? (await mkdtemp(join(tmpdir(), 'mass-sock-')));
  const socketPath = join(socketDirectory, TRIAL_PROXY_SOCKET);
  const logFile = episodePath(outDir, 'proxyLog');
  const timeoutSeconds = options.timeoutSeconds ?? 3600;
  const stopHarness = new AbortController();
  // The failed call that stopped the harness: agent code may have posted it (judged once the log is complete).
  let stoppedAt: number | null = null;
  const proxy = await startRecordingProxy({
    upstream: options.baseUrl,
    listen: { socketPath },
    logFile,
    outputBudget: options.outputBudget,
    upstreamApiKey: options.apiKey,
    retry: options.retry,
    onRow: (row) => {
      if ((options.stopOnModelError ?? true) && isFailedModelCall(row)) {
        stoppedAt ??= row.seq;
        stopHarness.abort();
      }
    },
  });
  let harnessRun;
  let harnessTexts: HarnessTexts | undefined;
  const sandboxMode = options.sandbox ?? 'bubblewrap';
  const qwenCode = await prepareQwenCode({
    node: options.harnessNode,
    guarded: sandboxMode === 'bubblewrap',
  });
  const profile = options.harnessProfile ?? DEFAULT_HARNESS_PROFILE;
  let agentPaths = { workspacePath: workspace.workspaceDir, homePath: episodePath(outDir, 'home') };
  const output = captureQwenCodeOutput(outDir);
  let egressDirectory: string | null = null;
  let egress: EgressProxy | null = null;
  let gpu: GpuLease | null = null;
  try {
    if (network !== false) {
      // Its own short directory, like the model proxy's: the sandbox sees the directory (read-only), never the log.
      egressDirectory = trialEnvironment?.socketDirectory ?? (await mkdtemp(join(tmpdir(), 'mass-egress-')));
      egress = await startEgressProxy({
        allow: egressAllowance(network),
        privateDestinations: options.privateDestinations ?? [],
        socketPath: join(egressDirectory, TRIAL_EGRESS_SOCKET),
        logFile: episodePath(outDir, 'egressLog'),
      });
    }
    if (options.gpus !== undefined && options.gpus.length > 0) {
      const pool = options.gpuPool ?? processGpuPool;
      if (options.gpus.every((index) => pool.inUse.includes(index))) {
        options.log?.(`episode ${episodeId}: waiting for a GPU (${options.gpus.join(', ')} in use)`);
      }
      gpu = await pool.acquire(options.gpus);
    }
    if (trialEnvironment !== null) {
      ({ result: harnessRun, texts: harnessTexts } = await runInTrialEnvironment(trialEnvironment, {
        options,
        qwenCode,
        outDir,
        prompt,
        timeoutSeconds,
        profile,
        output,
        signal: stopHarness.signal,
      }));
      agentPaths = { workspacePath: trialEnvironment.workdir, homePath: HARNESS_HOME_INSIDE };
    } else {
      const sandbox = await Sandbox.open({
        mode: sandboxMode,
        ...(options.container ? { container: options.container } : {}),
        workspace: workspace.workspaceDir,
        stateDirectory: episodePath(outDir, 'sandbox'),
        homeDirectory: episodePath(outDir, 'home'),
        readOnlyPaths: workspace.protectedAssets.map((asset) => asset.path),
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
        readableDirectories: qwenCode.readableDirectories,
        proxySocketPath: socketPath,
        ...(egress === null ? {} : { egressSocketPath: egress.socketPath }),
        ...(gpu === null ? {} : { gpu: gpu.index }),
      });
      try {
        agentPaths = { workspacePath: sandbox.workspaceInside, homePath: sandbox.homeInside };
        const { texts, ...harness } = await qwenCodeCommand(
          qwenCode,
          {
            homeDirectory: sandbox.homeDirectory,
            homeInside: sandbox.homeInside,
            proxyBaseUrl: sandbox.proxyBaseUrl!,
            isolated: sandbox.mode === 'bubblewrap',
            guardDirectory: episodePath(outDir, 'sandbox'),
            pathInside: (hostPath) => sandbox.pathInside(hostPath),
          },
          {
            model: options.model,
            seed: options.seed,
            sampling: options.sampling,
            maxOutputTokens: options.maxOutputTokens,
            timeoutSeconds,
            contextWindowSize: options.contextWindowSize,
            singleAgent: options.singleAgent,
            profile,
            images: options.images,
          },
        );
        harnessTexts = texts;
        options.log?.(`episode ${episodeId}: harness started (${sandbox.mode})`);
        harnessRun = await sandbox.run({
          ...harness,
          stdin: prompt,
          stdout: output.events.sink,
          stderr: output.stderr.sink,
          limits: {
            wallClockSeconds: timeoutSeconds,
            cpuSeconds: options.cpuSeconds,
            memoryBytes: options.memoryBytes ?? 8 * 1024 ** 3,
            processes: options.processLimit,
            diskBytes: options.diskBytes,
          },
          signal: stopHarness.signal,
        });
      } finally {
        await sandbox.close();
      }
    }
  } finally {
    gpu?.release();
    await egress?.close();
    await proxy.close();
    if (trialEnvironment === null) {
      if (egressDirectory !== null) await rm(egressDirectory, { recursive: true, force: true });
      await rm(socketDirectory, { recursive: true, force: true });
    } else {
      // The sockets' folder is the environment's: only the sockets go.
      await rm(socketPath, { force: true });
      await rm(join(socketDirectory, TRIAL_EGRESS_SOCKET), { force: true });
    }
    output.events.close();
    output.stderr.close();
  }
  const capturedEvents = output.events.close();
  const capturedStderr = output.stderr.close();
  if (proxy.logError) throw proxy.logError;
  if (egress?.logError) throw egress.logError;

  const assets = [];
  for (const asset of workspace.protectedAssets) {
    let after: string | null = null;
    try {
      after = await sha256WorkspaceFile(workspace.workspaceDir, asset.path);
    } catch {
      after = null;
    }
    assets.push({ path: asset.path, before: asset.sha256, after });
  }
  const tamperedPaths = assets.filter((asset) => asset.after !== asset.before).map((asset) => asset.path);
  const rows = await readProxyLog(logFile);
  const facts = episodeFacts(rows, { episodePrompt: prompt });
  const { threads } = facts;
  await writeFile(
    episodePath(outDir, 'threads'),
    threads.map((thread) => `${JSON.stringify(thread)}\n`).join(''),
  );
  const harnessRows = rows.filter((row) => !facts.forgedRequests.has(row.seq));
  const harness = await summariseHarnessEvents(episodePath(outDir, 'harnessEvents'));
  const outcome = classifyOutcome({
    harness,
    orchestratorFinal: facts.orchestratorFinal,
    lastToolCalls: facts.lastToolCalls,
    stoppedByForgedRequest: stoppedAt !== null && facts.forgedRequests.has(stoppedAt) ? stoppedAt : null,
    process: {
      exitCode: harnessRun.exitCode,
      signal: harnessRun.signal,
      timedOut: harnessRun.timedOut,
      limitExceeded:
        harnessRun.limitExceeded === 'cpu-time'
          ? 'cpu'
          : harnessRun.limitExceeded === 'wall-clock'
            ? null
            : harnessRun.limitExceeded,
    },
    rows: harnessRows,
    tamperedPaths,
    outputBudgetSpent: proxy.outputBudgetSpent,
  });

  const chatRows = harnessRows.filter(isChatRow);
  const perThread = threads
    .filter((thread) => thread.forged !== true)
    .map((thread) => ({
      threadId: thread.threadId,
      role: thread.role,
      calls: thread.calls,
      ...thread.usage,
    }));
  const endedAt = new Date();
  const record: EpisodeRecord = {
    episodeId,
    task: { id: task.manifest.id, dir: task.dir },
    workflowHash: options.workflow ? workflowHash(options.workflow) : null,
    teacher: options.teacher ?? false,
    seed: options.seed,
    dataSeed: dataSeed(options),
    model: options.model,
    baseUrl: options.baseUrl,
    status: outcome.status,
    failure: outcome.failure,
    timings: {
      startedAt: startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - startedAt.getTime(),
      harnessMs: Math.round(harnessRun.wallSeconds * 1000),
    },
    usage: {
      total: perThread.reduce(
        (sum, thread) => ({
          promptTokens: sum.promptTokens + thread.promptTokens,
          completionTokens: sum.completionTokens + thread.completionTokens,
          reasoningTokens: sum.reasoningTokens + thread.reasoningTokens,
        }),
        { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
      ),
      perThread,
    },
    modelCalls: chatRows.length,
    failedModelCalls: chatRows.filter((row) => row.error !== null || row.status === null || row.status >= 400)
      .length,
    retriedModelCalls: chatRows.filter(wasRetried).length,
    delegations: facts.delegations,
    forged: facts.forged,
    harnessOutput: {
      events: capturedEvents,
      stderr: capturedStderr,
      unreadableEventLines: harness.unreadableLines,
    },
    integrity: { assets, tampered: tamperedPaths.length > 0, tamperedPaths },
    sandbox: {
      enabled: harnessRun.sandboxed,
      exitCode: harnessRun.exitCode,
      signal: harnessRun.signal,
      limitExceeded: harnessRun.limitExceeded,
      cpuSeconds: harnessRun.cpuSeconds,
      peakMemoryBytes: harnessRun.peakMemoryBytes,
      ...agentPaths,
      ...(gpu === null ? {} : { gpu: gpu.index }),
    },
    ...(egress === null || network === false
      ? {}
      : { egress: { ...egressRecord(network), ...egress.counts() } }),
    harness: {
      name: 'qwen-code',
      version: QWEN_CODE_VERSION,
      nodeVersion: qwenCode.node.version,
      profile,
      ...(harnessTexts === undefined ? {} : { texts: harnessTexts }),
    },
  };
  await EpisodeRecord.write(recordPath, record);
  options.log?.(`episode ${episodeId}: ${record.status}${record.failure ? ` (${record.failure.kind})` : ''}`);
  return { record, ran: true };
}

/** Where the harness's own settings are put in a trial's environment (its QWEN_HOME). */
const HARNESS_HOME_INSIDE = '/tmp/mass-harness-home';

/** An episode's workspace folder when the task's files live in its environment: empty until handed back. */
async function emptyWorkspace(workspaceDir: string): Promise<{
  workspaceDir: string;
  protectedAssets: Array<{ path: string; sha256: string }>;
}> {
  await mkdir(workspaceDir, { recursive: true });
  return { workspaceDir, protectedAssets: [] };
}

/**
 * The harness in a trial's environment: its settings put in (owned by the agent's user), its prompt on standard
 * input, at the environment's working folder; then that folder handed back into the episode's workspace (no link,
 * no set-user-ID bit), so that the episode's record shows what the agents left.
 */
async function runInTrialEnvironment(
  environment: TrialEnvironment,
  run: {
    options: EpisodeOptions;
    qwenCode: Awaited<ReturnType<typeof prepareQwenCode>>;
    outDir: string;
    prompt: string;
    timeoutSeconds: number;
    profile: HarnessProfile;
    output: ReturnType<typeof captureQwenCodeOutput>;
    signal: AbortSignal;
  },
) {
  const { options, outDir } = run;
  const home = episodePath(outDir, 'home');
  await mkdir(home, { recursive: true });
  const shared = environment.sharedDirectory;
  const harness = await qwenCodeCommand(
    run.qwenCode,
    {
      homeDirectory: home,
      homeInside: HARNESS_HOME_INSIDE,
      proxyBaseUrl: environment.proxyUrl,
      isolated: true,
      guardDirectory: shared.host,
      pathInside: (hostPath) =>
        hostPath === shared.host || hostPath.startsWith(`${shared.host}/`)
          ? join(shared.inside, relative(shared.host, hostPath))
          : hostPath,
    },
    {
      model: options.model,
      seed: options.seed,
      sampling: options.sampling,
      maxOutputTokens: options.maxOutputTokens,
      timeoutSeconds: run.timeoutSeconds,
      contextWindowSize: options.contextWindowSize,
      singleAgent: options.singleAgent,
      profile: run.profile,
      images: options.images,
    },
  );
  await environment.putFiles(home, HARNESS_HOME_INSIDE, options.environmentUser ?? null);
  options.log?.(`episode ${basename(outDir)}: harness started (${environment.kind} trial environment)`);
  const result = await environment.exec({
    command: [harness.command, ...harness.args],
    env: { ...options.environmentEnv, ...harness.env },
    user: options.environmentUser ?? null,
    stdin: run.prompt,
    stdout: run.output.events.sink,
    stderr: run.output.stderr.sink,
    limits: { wallClockSeconds: run.timeoutSeconds },
    signal: run.signal,
  });
  const staging = episodePath(outDir, 'workspace');
  await rm(staging, { recursive: true, force: true });
  const handed = await environment.getFiles(environment.workdir, staging);
  if (handed === null) await mkdir(staging, { recursive: true });
  return { result, texts: harness.texts };
}

function dataSeed(options: EpisodeOptions): number {
  return options.dataSeed ?? options.seed;
}

function isFailedModelCall(row: ProxyLogRow): boolean {
  return (
    isChatRow(row) &&
    !row.clientDisconnected &&
    (row.error !== null || row.status === null || row.status >= 400)
  );
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

/** What the record says the agents were allowed: the allow-list, or every public host. */
function egressRecord(network: Exclude<EpisodeNetwork, false>): { allow: string[]; anyPublicHost?: true } {
  return 'anyPublicHost' in network ? { allow: [], anyPublicHost: true } : { allow: network.allow };
}
