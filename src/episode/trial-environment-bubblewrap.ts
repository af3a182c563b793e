import { existsSync, realpathSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';

import { UserError } from '../errors.js';
import { handBackFiles, type HandBackReport } from './hand-back-files.js';
import type { SandboxResult } from './sandbox-run.js';
import { SANDBOX_STATE, SANDBOX_WORKSPACE } from './sandbox-layout.js';
import { BubblewrapSandbox } from './sandbox-bubblewrap-environment.js';
import type { SandboxMode } from './sandbox.js';
import {
  TRIAL_EGRESS_PORT,
  TRIAL_EGRESS_SOCKET,
  TRIAL_PROXY_PORT,
  TRIAL_PROXY_SOCKET,
  type TrialCommand,
  type TrialEnvironment,
} from './trial-environment.js';

interface BubblewrapTrialOptions {
  /** The run configuration's `sandbox`: a bubblewrap trial needs `bubblewrap` (its paths are its sandbox's). */
  mode: SandboxMode;
  /** The trial's workspace on the host (made by the caller), at `/workspace` inside. */
  workspace: string;
  /** A host folder the trial owns: its state paths, the folders put in, the sandbox's own files. */
  root: string;
  /**
   * Absolute folders outside the workspace that persist from the agent's commands to the verifier's (a task's
   * `state_paths`): each a folder of `root`, bound read-write at its path in every command.
   */
  statePaths?: string[];
  /** `[environment.env]`: set for every command. */
  env?: Record<string, string>;
  readableDirectories?: string[];
  hiddenDirectories?: string[];
}

/** The host folder of a trial's path inside: `/app` → `<root>/paths/app`, `/var/lib/x` → `<root>/paths/var%2Flib%2Fx`. */
export function statePathFolder(root: string, inside: string): string {
  return join(root, 'paths', encodeURIComponent(inside.slice(1)));
}

/**
 * A trial's environment in bubblewrap, for tasks without an image of their own: a persistent root the trial owns
 * (`root`), whose folders are bound read-write in every command at the same paths: the workspace at `/workspace`,
 * each declared state path (`/app`…) and each folder put in (`/tests`, `/logs/verifier`, `/solution`). Each command
 * runs in a fresh sandbox over them (the host's programs, its own user when mass is root, nothing else of the host),
 * so the verifier sees exactly the state the agent left, in the workspace and outside it; no process outlives its
 * command. Files read back go through `handBackFiles`.
 */
export class BubblewrapTrialEnvironment implements TrialEnvironment {
  readonly kind = 'bubblewrap';
  readonly workdir = SANDBOX_WORKSPACE;
  readonly proxyBaseUrl = `http://127.0.0.1:${TRIAL_PROXY_PORT}`;
  readonly egressProxyUrl = `http://127.0.0.1:${TRIAL_EGRESS_PORT}`;
  /** Inside path → host folder, for every folder bound besides the workspace. */
  private readonly folders = new Map<string, string>();

  private constructor(
    private readonly options: BubblewrapTrialOptions,
    private readonly workspace: string,
    private readonly root: string,
    readonly socketDirectory: string,
  ) {}

  static async create(options: BubblewrapTrialOptions): Promise<BubblewrapTrialEnvironment> {
    if (options.mode !== 'bubblewrap') {
      throw new UserError(
        "a bubblewrap trial's /tests, /logs/verifier, /solution and state paths exist only in its sandbox: set sandbox: bubblewrap in the run configuration",
      );
    }
    await mkdir(options.root, { recursive: true });
    const socketDirectory = await mkdtemp(join(tmpdir(), 'mass-trial-'));
    await chmod(socketDirectory, 0o755);
    const environment = new BubblewrapTrialEnvironment(
      options,
      realpathSync(options.workspace),
      realpathSync(options.root),
      socketDirectory,
    );
    for (const inside of options.statePaths ?? []) {
      const host = statePathFolder(environment.root, inside);
      await mkdir(host, { recursive: true });
      environment.folders.set(inside, host);
    }
    return environment;
  }

  get sharedDirectory(): { host: string; inside: string } {
    return { host: join(this.root, 'sandbox'), inside: SANDBOX_STATE };
  }

  async exec(command: TrialCommand): Promise<SandboxResult> {
    const socket = (name: string) => {
      const path = join(this.socketDirectory, name);
      return existsSync(path) ? path : undefined;
    };
    const proxySocketPath = socket(TRIAL_PROXY_SOCKET);
    const egressSocketPath = socket(TRIAL_EGRESS_SOCKET);
    const sandbox = await BubblewrapSandbox.open({
      mode: 'bubblewrap',
      workspace: this.workspace,
      stateDirectory: this.sharedDirectory.host,
      homeDirectory: join(this.root, 'home'),
      placedDirectories: [...this.folders].map(([inside, host]) => ({ host, inside, writable: true })),
      readableDirectories: this.options.readableDirectories ?? [],
      hiddenDirectories: this.options.hiddenDirectories ?? [],
      ...(proxySocketPath ? { proxySocketPath, forwarderPort: TRIAL_PROXY_PORT } : {}),
      ...(egressSocketPath ? { egressSocketPath, egressForwarderPort: TRIAL_EGRESS_PORT } : {}),
      warn: () => {},
    });
    try {
      const [executable, ...args] = command.command;
      return await sandbox.run({
        command: executable!,
        args,
        env: { ...this.options.env, ...command.env },
        cwd: this.hostPath(command.cwd ?? SANDBOX_WORKSPACE),
        ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
        ...(command.stdout ? { stdout: command.stdout } : {}),
        ...(command.stderr ? { stderr: command.stderr } : {}),
        ...(command.limits ? { limits: command.limits } : {}),
        ...(command.signal ? { signal: command.signal } : {}),
      });
    } finally {
      await sandbox.close();
    }
  }

  async putFiles(hostFolder: string, inside: string): Promise<void> {
    let target: string;
    try {
      target = this.hostPath(inside);
    } catch {
      target = join(this.root, 'placed', encodeURIComponent(inside.slice(1)));
      await mkdir(target, { recursive: true });
      this.folders.set(inside, target);
    }
    await rm(target, { recursive: true, force: true });
    await cp(hostFolder, target, { recursive: true });
  }

  async getFiles(inside: string, hostFolder: string): Promise<HandBackReport | null> {
    let source: string;
    try {
      source = this.hostPath(inside);
    } catch {
      return null;
    }
    if (!existsSync(source)) return null;
    return handBackFiles(source, hostFolder);
  }

  async remove(): Promise<void> {
    await rm(this.socketDirectory, { recursive: true, force: true });
  }

  /** The host path of a path inside the workspace or a bound folder. */
  private hostPath(inside: string): string {
    const normal = posix.normalize(inside);
    const bound: Array<[string, string]> = [[SANDBOX_WORKSPACE, this.workspace], ...this.folders];
    for (const [folder, host] of bound) {
      if (normal === folder) return host;
      if (normal.startsWith(`${folder}/`)) return join(host, normal.slice(folder.length + 1));
    }
    throw new UserError(
      `${inside} is outside what a bubblewrap trial keeps (/workspace and the task's state_paths): declare it in task.toml's [environment] state_paths`,
    );
  }
}
