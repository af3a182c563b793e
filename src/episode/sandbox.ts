import type { Isolation } from './isolation.js';
import { BubblewrapSandbox } from './sandbox-bubblewrap-environment.js';
import { HostSandbox } from './sandbox-host-environment.js';
import type { SandboxCommand } from './sandbox-layout.js';
import type { SandboxMode, SandboxOptions } from './sandbox-options.js';
import type { SandboxResult } from './sandbox-run.js';

export type { OutputSink, SandboxResult } from './sandbox-run.js';
export type { SandboxLimitName, SandboxLimits } from './sandbox-limits.js';
export type { SandboxMode, SandboxOptions } from './sandbox-options.js';
export {
  DEFAULT_EGRESS_FORWARDER_PORT,
  DEFAULT_FORWARDER_PORT,
  egressEnvironment,
  NO_PROXY_HOSTS,
  RUN_MARKER_VARIABLE,
  SANDBOX_HOME,
  SANDBOX_WORKSPACE,
  sandboxPath,
  type SandboxCommand,
} from './sandbox-layout.js';
export { UNSANDBOXED_WARNING } from './sandbox-host-environment.js';

/**
 * Where an episode's agent-executed code runs: open one per episode, run the harness in it (`run` may be called more
 * than once), close it. Code inside reaches the episode's proxy at `proxyBaseUrl`. Two environments implement it, each
 * in its own file over the shared layout (`sandbox-layout.ts`): bubblewrap (`sandbox-bubblewrap-environment.ts`) and
 * the host's own processes with no sandbox (`sandbox-host-environment.ts`). Both are an `Isolation`, as a benchmark
 * trial's environments are.
 */
export interface Sandbox extends Isolation {
  readonly kind: 'bubblewrap' | 'host';
  readonly mode: SandboxMode;
  /** The workspace on the host. */
  readonly workspace: string;
  /** The home on the host (where to write the harness's settings). */
  readonly homeDirectory: string;
  /** HOME as the command sees it: `/home/agent` in a bubblewrap sandbox. */
  readonly homeInside: string;
  /** The model proxy as code inside reaches it (`http://127.0.0.1:<port>`), when a proxy socket was given. */
  readonly proxyBaseUrl: string | null;
  /** The egress proxy as code inside reaches it, when an egress socket was given. */
  readonly egressProxyUrl: string | null;
  /** The host GPU given to the sandbox, if any. */
  readonly gpu: number | null;
  /**
   * A host path as the command sees it: inside the workspace, the home, the sandbox's own files or a placed directory,
   * moved with them; any other unchanged.
   */
  pathInside(hostPath: string): string;
  /** Where a command finds a placed directory: its inside path in a bubblewrap sandbox, else its host path. */
  placedPath(inside: string): string;
  run(command: SandboxCommand): Promise<SandboxResult>;
  /**
   * Stops what the sandbox started for itself (the host's forwarders) and, in a sandbox of its own user, hands what
   * that user owns back and frees the uid. Call it once no `run` is in progress; idempotent.
   */
  close(): Promise<void>;
}

export const Sandbox = {
  /** The environment `options.mode` names: bubblewrap, or (`unsandboxed`) the host's own processes. */
  open(options: SandboxOptions): Promise<Sandbox> {
    return options.mode === 'bubblewrap' ? BubblewrapSandbox.open(options) : HostSandbox.open(options);
  },
};
