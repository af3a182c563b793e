import type { SandboxLimits } from './sandbox-limits.js';
import type { OutputSink, SandboxResult } from './sandbox-run.js';

/**
 * Where agent-executed code runs: a bubblewrap sandbox (`sandbox-bubblewrap-environment.ts`), a container of a
 * task's own image (`trial-environment-container.ts`), or the host's own processes with no sandbox
 * (`sandbox-host-environment.ts`, the CLI's `--no-sandbox`).
 */
export type IsolationKind = 'bubblewrap' | 'container' | 'host';

/** One command in an isolated environment. */
export interface IsolatedCommand {
  command: string[];
  /** Fed on standard input, then closed (a harness's prompt). */
  stdin?: string;
  /**
   * Who runs it, as a task names it (`[agent] user`, `[verifier] user`); default: the environment's own user. Only a
   * container has users to choose from: a sandbox runs every command as its own.
   */
  user?: string | null;
  /** Where it starts, as it sees it; default: the environment's working folder (`workdir`). */
  cwd?: string;
  /** Variables set on top of the environment's own (a container image's PATH, and HOME for the user, are kept). */
  env?: Record<string, string>;
  stdout?: OutputSink;
  stderr?: OutputSink;
  limits?: SandboxLimits;
  signal?: AbortSignal;
}

/**
 * The seam every environment of agent code implements: an episode's own sandbox and a benchmark trial's environment
 * alike (`TrialEnvironment` adds Harbor's files in and out). Code inside reaches the model only through `proxyBaseUrl` and
 * the internet only through `egressProxyUrl`; each command runs as a process tree under its limits, killed whole at its
 * end. How an environment is made and ended is its own: a sandbox is opened and closed by the episode, a trial's
 * environment created and removed by the trial.
 */
export interface Isolation {
  readonly kind: IsolationKind;
  /** Where commands start, as they see it: `/workspace` in bubblewrap, the image's WORKDIR in a container. */
  readonly workdir: string;
  /** The model proxy as code inside reaches it (no `/v1`); null when no proxy was given. */
  readonly proxyBaseUrl: string | null;
  /** The egress proxy as code inside reaches it; null when none was given. */
  readonly egressProxyUrl: string | null;
  exec(command: IsolatedCommand): Promise<SandboxResult>;
}
