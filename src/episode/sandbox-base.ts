import type { IsolatedCommand } from './isolation.js';
import type { BubblewrapMounts } from './sandbox-bubblewrap.js';
import { runCommandOf, type SandboxCommand } from './sandbox-layout.js';
import type { SandboxMode } from './sandbox-options.js';
import type { SandboxResult } from './sandbox-run.js';
import type { Sandbox } from './sandbox.js';

/** What every sandbox holds: its layout's mounts and how code inside reaches the proxies. */
export interface SandboxEndpoints {
  mounts: BubblewrapMounts;
  /** `http://127.0.0.1:<port>` for code inside, when a proxy socket was given. */
  proxyBaseUrl: string | null;
  /** `http://127.0.0.1:<port>` of the egress proxy for code inside, when an egress socket was given. */
  egressProxyUrl: string | null;
  /** The host GPU given to the sandbox, if any. */
  gpu: number | null;
}

/**
 * What the two sandboxes of an episode share (`sandbox-bubblewrap-environment.ts`, `sandbox-host-environment.ts`): the
 * host side of their layout, and `exec` as a `run` of the same command. Where commands run, and how, is each one's.
 */
export abstract class SandboxBase implements Sandbox {
  abstract readonly kind: 'bubblewrap' | 'host';
  abstract readonly mode: SandboxMode;
  abstract readonly workdir: string;
  abstract readonly homeInside: string;
  readonly proxyBaseUrl: string | null;
  readonly egressProxyUrl: string | null;
  readonly gpu: number | null;
  protected readonly mounts: BubblewrapMounts;
  private closed = false;

  protected constructor(endpoints: SandboxEndpoints) {
    this.mounts = endpoints.mounts;
    this.proxyBaseUrl = endpoints.proxyBaseUrl;
    this.egressProxyUrl = endpoints.egressProxyUrl;
    this.gpu = endpoints.gpu;
  }

  get workspace(): string {
    return this.mounts.workspace.host;
  }

  get homeDirectory(): string {
    return this.mounts.home.host;
  }

  abstract pathInside(hostPath: string): string;
  /** The host path of a path as a command sees it (`pathInside` undone). */
  protected abstract hostPathOf(insidePath: string): string;
  abstract placedPath(inside: string): string;
  abstract run(command: SandboxCommand): Promise<SandboxResult>;
  /** Releases what the sandbox holds (`close`, once). */
  protected abstract release(): Promise<void>;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.release();
  }

  exec(command: IsolatedCommand): Promise<SandboxResult> {
    return this.run(runCommandOf(this.kind, command, (inside) => this.hostPathOf(inside)));
  }
}
