import { randomUUID } from 'node:crypto';

import { startHostForwarder, type HostForwarder } from './forwarder.js';
import { SandboxBase, type SandboxEndpoints } from './sandbox-base.js';
import {
  commandPlan,
  placedPath,
  RUN_MARKER_VARIABLE,
  sandboxMounts,
  type SandboxCommand,
} from './sandbox-layout.js';
import type { SandboxOptions } from './sandbox-options.js';
import { resolveSandbox } from './sandbox-resolve.js';
import { runProcessTree, type SandboxResult } from './sandbox-run.js';

export const UNSANDBOXED_WARNING =
  'running agent code WITHOUT a sandbox (--no-sandbox): it can read and write anything this user can, reach the ' +
  'network and change protected files; only the CPU, memory, process, disk and wall-clock limits and the ' +
  'process-tree kill apply';

/**
 * No sandbox (`sandbox: unsandboxed`, the CLI's `--no-sandbox`): each command is a process group of this user on the
 * host, every path the host's, under the same limits and process-tree kill as in a sandbox; the proxies are reached
 * through forwarders on the host's loopback at ports the system picks. Opening one warns that nothing is isolated.
 */
export class HostSandbox extends SandboxBase {
  readonly kind = 'host';
  readonly mode = 'unsandboxed';

  private constructor(
    endpoints: SandboxEndpoints,
    /** Forwarders on the host's loopback, one per proxy socket, stopped on close. */
    private readonly forwarders: HostForwarder[],
  ) {
    super(endpoints);
  }

  static async open(options: SandboxOptions): Promise<HostSandbox> {
    const resolved = resolveSandbox(options, false);
    const mounts = sandboxMounts({ ...resolved, system: [], systemFiles: [], devices: [] });
    (options.warn ?? ((message) => process.stderr.write(`warning: ${message}\n`)))(UNSANDBOXED_WARNING);
    const forwarders: HostForwarder[] = [];
    const urlOf = async (socketPath: string | null): Promise<string | null> => {
      if (socketPath === null) return null;
      const forwarder = await startHostForwarder(socketPath);
      forwarders.push(forwarder);
      return `http://127.0.0.1:${forwarder.port}`;
    };
    try {
      const proxyBaseUrl = await urlOf(resolved.proxySocketPath);
      const egressProxyUrl = await urlOf(resolved.egressSocketPath);
      return new HostSandbox({ mounts, proxyBaseUrl, egressProxyUrl, gpu: options.gpu ?? null }, forwarders);
    } catch (error) {
      await Promise.all(forwarders.map((forwarder) => forwarder.close()));
      throw error;
    }
  }

  /** Commands start in the workspace, at its host path. */
  get workdir(): string {
    return this.workspace;
  }

  get homeInside(): string {
    return this.homeDirectory;
  }

  /** Every path is the host's. */
  pathInside(hostPath: string): string {
    return hostPath;
  }

  protected hostPathOf(insidePath: string): string {
    return insidePath;
  }

  placedPath(inside: string): string {
    return placedPath(this.mounts, inside, false);
  }

  run(command: SandboxCommand): Promise<SandboxResult> {
    const marker = { name: RUN_MARKER_VARIABLE, value: randomUUID() };
    const plan = commandPlan(this.mounts, command, {
      isolated: false,
      egressProxyUrl: this.egressProxyUrl,
      gpu: this.gpu,
      marker,
    });
    return runProcessTree({
      ...plan,
      marker,
      executable: command.command,
      args: command.args ?? [],
      stdin: command.stdin,
      stdout: command.stdout,
      stderr: command.stderr,
      signal: command.signal,
      ownProcessGroup: true,
      sandboxed: false,
    });
  }

  /** Stops the host forwarders. */
  protected async release(): Promise<void> {
    await Promise.all(this.forwarders.map((forwarder) => forwarder.close()));
  }
}
