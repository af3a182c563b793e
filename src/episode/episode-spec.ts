import { z } from 'zod';

import { HARNESS_PROFILES } from '../config/harness-profile.js';
import { SandboxMode } from '../config/sandbox-mode.js';
import type { HarnessNode } from '../harness/harness-node.js';
import { DEFAULT_SAMPLING } from '../harness/qwen-settings.js';
import { ProxyLimits } from '../proxy/proxy-limits.js';
import { EpisodeNetwork, NetworkAllowEntry } from '../tasks/task-network.js';
import { durationSchema } from '../timer-duration.js';
import { TeamDesign } from '../workflow/workflow.js';
import type { GpuPool } from './gpu-pool.js';
import type { TrialEnvironment } from './trial-environment.js';

/** What an episode assumes for a setting its specification leaves out, where the episode itself decides. */
export const EPISODE_DEFAULTS = {
  /** Wall-clock limit of the whole harness run. */
  timeoutSeconds: 3600,
  /** Completion tokens per model call. */
  maxOutputTokens: DEFAULT_SAMPLING.maxTokens,
} as const;

/**
 * One episode, as it can be written down: the task's team and model, its seeds, limits, sampling, sandbox and network.
 * Every setting of an episode is declared here once: `EpisodeOptions` is this plus what stays in the process that
 * runs it (`EpisodeLocal`), the queue's job is this plus its path rules (`queue/episode-job.ts`), and the recording
 * proxy's limits are its `ProxyLimits` fields. Checked where a specification arrives from outside (a queued job); in
 * process the types hold it.
 */
export const EpisodeSpec = z
  .object({
    /** The team workflow rendered into the prompt; absent for a bare-task episode. */
    workflow: TeamDesign.optional(),
    /** Append the teacher directive (while collecting training data). */
    teacher: z.boolean().optional(),
    /** The served model's name. The harness takes it as `--model <name>`: never a flag of its own. */
    model: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[^-\p{Cc}][^\p{Cc}]*$/u, 'a model name (not starting with "-", no control characters)'),
    /** The model server, OpenAI style, ending in `/v1`. */
    baseUrl: z
      .string()
      .max(2048)
      .url()
      .refine((url) => /^https?:\/\//i.test(url), 'an http(s) URL'),
    /** The sampling seed: the model's seed on every call of the episode. Vary it to get another run of the same task. */
    seed: z.number().int(),
    /**
     * The data seed: the task's generator draws the workspace's data (and the grader its planted truth) from it. One
     * per task and run, the same across the runs that are compared or collected; default: the sampling seed.
     */
    dataSeed: z.number().int().optional(),
    /** Wall-clock limit of the whole harness run (default `EPISODE_DEFAULTS.timeoutSeconds`). */
    timeoutSeconds: durationSchema({ unit: 's' }).optional(),
    /** CPU seconds of the harness and everything it starts (default: the sandbox's, `defaultCpuSeconds`). */
    cpuSeconds: z.number().positive().optional(),
    /** Resident memory of the harness and everything it starts (default 8 GiB). */
    memoryBytes: z.number().positive().optional(),
    /** Processes of the harness's tree at once (default: the sandbox's, `DEFAULT_PROCESS_LIMIT`). */
    processLimit: z.number().int().positive().optional(),
    /** Disk the workspace and the home may take (default: the sandbox's, `DEFAULT_DISK_BYTES`). */
    diskBytes: z.number().positive().optional(),
    /** Completion tokens per model call (default `EPISODE_DEFAULTS.maxOutputTokens`). */
    maxOutputTokens: z.number().int().positive().optional(),
    // The whole episode's output budget and the proxy's retry: the recording proxy's own limits.
    ...ProxyLimits.shape,
    /** The executor's sampling; each left out keeps the harness's default (`DEFAULT_SAMPLING`). */
    sampling: z
      .object({
        temperature: z.number().optional(),
        topP: z.number().optional(),
        topK: z.number().int().optional(),
        enableThinking: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** The context the harness compacts its history for. */
    contextWindowSize: z.number().int().positive().optional(),
    /** `unsandboxed` only where bubblewrap cannot run; the CLI's `--no-sandbox`. */
    sandbox: SandboxMode.optional(),
    /**
     * Stop the harness at the first failed model call (default true): the episode cannot succeed any more, and
     * harnesses retry server errors on their own for a minute or more.
     */
    stopOnModelError: z.boolean().optional(),
    /**
     * Host paths (folders or files) the configuration hides from the agents (`sandboxHide`), beside /root, /home and
     * /run, which the sandbox always hides. Further paths only add to what the agents do not see.
     */
    sandboxHide: z.array(z.string()).max(256).optional(),
    /** The harness without its `agent` tool: the orchestrator cannot delegate (the single-agent baseline). */
    singleAgent: z.boolean().optional(),
    /**
     * What the agents may reach beyond the model, in place of the task's own `environment.network`: a benchmark's
     * allow-list, or every public host, for a Harbor task that asks for the internet. Default: the task's.
     */
    network: EpisodeNetwork.optional(),
    /**
     * Destinations whose loopback, private or link-local address the agents may reach (the run configuration's
     * `network.privateDestinations`; see `PrivateDestinations`). A task's own allow-list never opens one. Default
     * none.
     */
    privateDestinations: z.array(NetworkAllowEntry).max(256).optional(),
    /** Which of qwen-code's tools and skills the agents are offered (default `lean`; `stock`: qwen-code's defaults). */
    harnessProfile: z.enum(HARNESS_PROFILES).optional(),
    /** The served model takes image input (the executor endpoint's `images`): the harness is told so. */
    images: z.boolean().optional(),
    /**
     * GPUs of the host the episode may use (the configuration's `sandboxGpus`), by their numbers: it takes one of them
     * for itself from `gpuPool` before its sandbox opens, waiting while all are taken, and gives it back when the
     * sandbox closes. Default none.
     */
    gpus: z.array(z.number().int().nonnegative().max(1023)).max(1024).optional(),
  })
  .strict();
export type EpisodeSpec = z.infer<typeof EpisodeSpec>;

/**
 * What of an episode stays in the process that runs it, never written down nor queued: its folders, the key, the
 * callbacks, the pools and a trial's live environment. A queue's worker supplies its own.
 */
export interface EpisodeLocal {
  /** The task's folder. */
  taskDir: string;
  /** The episode directory; its name is the episode's id. */
  outDir: string;
  /** The upstream key; held by the episode's proxy, never given to the harness or written anywhere. */
  apiKey?: string;
  /** Further directories to hide from the agents (the run directory, other suites). */
  hiddenDirectories?: string[];
  /** Where GPUs are taken from (default `processGpuPool`, shared by every episode of this process). */
  gpuPool?: GpuPool;
  /** The Node that runs the harness (default: `harnessNode()`); benchmarks compare it with this process's. */
  harnessNode?: HarnessNode;
  /** Progress lines (stage names); default none. */
  log?: (message: string) => void;
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

/** Everything `runEpisode` takes: the specification and what stays in this process. */
export type EpisodeOptions = EpisodeSpec & EpisodeLocal;
