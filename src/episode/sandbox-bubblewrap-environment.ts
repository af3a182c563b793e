import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

import { UserError } from '../errors.js';
import { writeForwarder } from './forwarder.js';
import {
  bubblewrapArguments,
  sandboxLaunchEnvironment,
  findBubblewrap,
  findSystemProgram,
  probeBubblewrap,
  withForwarder,
  type LauncherOptions,
  type MovedMount,
} from './sandbox-bubblewrap.js';
import { gpuDeviceNodes } from './sandbox-gpu.js';
import {
  commandPlan,
  hostPathOf,
  pathInside,
  placedPath,
  relayUrl,
  RUN_MARKER_VARIABLE,
  SANDBOX_HOME,
  sandboxMounts,
  writableRoots,
  type SandboxCommand,
} from './sandbox-layout.js';
import { kernelLimitArguments } from './sandbox-limits.js';
import type { SandboxOptions } from './sandbox-options.js';
import { resolveSandbox } from './sandbox-resolve.js';
import { SandboxBase, type SandboxEndpoints } from './sandbox-base.js';
import { reportStart, runProcessTree, SANDBOX_OPENINGS, type SandboxResult } from './sandbox-run.js';
import { staging, type Staging } from './sandbox-staging.js';
import { hostSystemEntries, writeSystemFiles } from './sandbox-system.js';
import {
  allocateSandboxUser,
  handBack,
  handOver,
  releaseSandboxUser,
  type SandboxUser,
} from './sandbox-user.js';

/** Where each sandbox of its own user gets the empty folder its staged directories are mounted on (`Staging`). */
const STAGE_PARENT = '/tmp';

/** The sandbox's own uid, how its bwrap is started as it, and the empty folder its staging mounts on. */
interface OwnUser {
  user: SandboxUser;
  staging: Staging;
  stageDirectory: string;
}

/** How the sandbox's commands are started. */
interface BubblewrapLaunch {
  bwrapPath: string;
  prlimitPath: string;
  /** Starts the forwarder to the proxies before the command; null when no proxy socket was given. */
  launcher: LauncherOptions | null;
  /** Null when the sandbox runs as the caller (mass is not root, or no uid was free). */
  user: OwnUser | null;
  /** The proxy sockets' directories, given to the sandbox's user while it runs. */
  socketDirectories: string[];
}

/**
 * A bubblewrap sandbox (see `SandboxOptions` for what it shows): each command in fresh namespaces over the layout's
 * mounts (`sandbox-layout.ts`), under the kernel's limits (`prlimit`) and the watchdog's, with the forwarder to the
 * proxies started first on its own loopback; as a uid of its own when mass runs as root.
 */
export class BubblewrapSandbox extends SandboxBase {
  readonly kind = 'bubblewrap';
  readonly mode = 'bubblewrap';

  private constructor(
    endpoints: SandboxEndpoints,
    private readonly launch: BubblewrapLaunch,
  ) {
    super(endpoints);
  }

  /** Checks the options, lays the sandbox out and probes that bubblewrap can run it here. */
  static async open(options: SandboxOptions): Promise<BubblewrapSandbox> {
    const resolved = resolveSandbox(options, true);
    const system = hostSystemEntries();
    const mounts = sandboxMounts({
      ...resolved,
      system,
      systemFiles: writeSystemFiles(resolved.stateDirectory, SANDBOX_HOME),
      devices: options.gpu === undefined ? [] : gpuDeviceNodes(options.gpu, options.devRoot),
    });
    const { relays, stateDirectory } = resolved;
    const launcher =
      relays.length === 0
        ? null
        : {
            nodePath: resolved.forwarderNode,
            forwarderPath: join(
              mounts.state.inside,
              relative(stateDirectory, writeForwarder(stateDirectory)),
            ),
            relays,
          };
    const bwrapPath = findBubblewrap(options.bwrapPath);
    const prlimitPath = findSystemProgram('prlimit');
    const readable = mounts.readableDirectories;
    if (process.getuid?.() === 0) {
      assertReadableByOthers(readable.filter((mount) => !resolved.socketDirectories.includes(mount.host)));
    }
    const user = sandboxUser(bwrapPath, [
      mounts.workspace.host,
      mounts.home.host,
      stateDirectory,
      ...mounts.writableDirectories,
      ...mounts.placed.map((directory) => directory.host),
      ...readable.map((mount) => mount.host),
    ]);
    try {
      await probeBubblewrap(
        bwrapPath,
        system,
        user === null ? undefined : { key: 'own user', command: user.probeStaging.command },
      );
    } catch (error) {
      if (user) releaseUser(user);
      throw error;
    }
    return new BubblewrapSandbox(
      {
        mounts,
        proxyBaseUrl: relayUrl(relays, resolved.proxySocketPath),
        egressProxyUrl: relayUrl(relays, resolved.egressSocketPath),
        gpu: options.gpu ?? null,
      },
      { bwrapPath, prlimitPath, launcher, user, socketDirectories: resolved.socketDirectories },
    );
  }

  /** `/workspace`, wherever the workspace lies on the host. */
  get workdir(): string {
    return this.mounts.workspace.inside;
  }

  /** `/home/agent`, wherever the home lies on the host. */
  get homeInside(): string {
    return this.mounts.home.inside;
  }

  pathInside(hostPath: string): string {
    return pathInside(this.mounts, hostPath);
  }

  protected hostPathOf(insidePath: string): string {
    return hostPathOf(this.mounts, insidePath);
  }

  placedPath(inside: string): string {
    return placedPath(this.mounts, inside, true);
  }

  /**
   * Runs `command` in the sandbox. When the sandbox's own set-up fails before the command starts (bubblewrap, the
   * kernel's limits, the proxy forwarder: `started` false), nothing of it ran, and the sandbox is opened once more;
   * what the failed set-up printed stays on the command's standard error.
   */
  async run(command: SandboxCommand): Promise<SandboxResult> {
    let result = await this.runOnce(command);
    for (let opened = 1; result.started === false && opened < SANDBOX_OPENINGS; opened++) {
      if (command.signal?.aborted) break;
      result = await this.runOnce(command);
    }
    return result;
  }

  private runOnce(command: SandboxCommand): Promise<SandboxResult> {
    const { mounts } = this;
    const { bwrapPath, prlimitPath, launcher, user } = this.launch;
    const marker = { name: RUN_MARKER_VARIABLE, value: randomUUID() };
    const plan = commandPlan(mounts, command, {
      isolated: true,
      egressProxyUrl: this.egressProxyUrl,
      gpu: this.gpu,
      marker,
    });
    if (user) handOver(this.ownedDirectories, user.user);
    // The command starts behind a prologue that reports it started: the sandbox's set-up went well.
    const commandLine = reportStart([command.command, ...(command.args ?? [])]);
    // The kernel's limits first, so that the launcher, the forwarder and everything the command starts inherit them.
    const inside = [
      prlimitPath,
      ...kernelLimitArguments(plan.limits),
      '--',
      ...(launcher ? withForwarder(launcher, commandLine) : commandLine),
    ];
    const sandboxArguments = bubblewrapArguments(
      mounts,
      plan.cwd,
      inside,
      { sourceOf: user ? user.staging.sourceOf : (path) => path },
      plan.env,
    );
    const full = user
      ? user.staging.command([bwrapPath, ...sandboxArguments])
      : [bwrapPath, ...sandboxArguments];
    return runProcessTree({
      ...plan,
      env: sandboxLaunchEnvironment(marker),
      marker,
      executable: full[0]!,
      args: full.slice(1),
      cwd: mounts.workspace.host,
      stdin: command.stdin,
      stdout: command.stdout,
      stderr: command.stderr,
      signal: command.signal,
      ownProcessGroup: false,
      sandboxed: true,
      reportsStart: true,
    });
  }

  /** What the sandbox's own user owns while it runs: what it writes, and the proxies' sockets it connects to. */
  private get ownedDirectories(): string[] {
    return [...writableRoots(this.mounts), ...this.launch.socketDirectories];
  }

  /**
   * In a sandbox of its own user, gives everything that user owns in the workspace, the home and the writable
   * directories back to this process's user and frees the uid. Call it once no `run` is in progress.
   */
  protected async release(): Promise<void> {
    const user = this.launch.user;
    if (!user) return;
    const skipped = handBack(this.ownedDirectories, user.user, {
      uid: process.getuid!(),
      gid: process.getgid!(),
    });
    // Entries that could not be handed back (a path past PATH_MAX) still belong to the uid: it stays reserved, so
    // that no later sandbox is given their owner.
    if (skipped === 0) releaseUser(user);
    else removeStage(user);
  }
}

/**
 * The sandbox's own user when this process is root (null otherwise), with the staging that starts its bwrap and a
 * bare one for the probe.
 */
function sandboxUser(bwrapPath: string, roots: string[]): (OwnUser & { probeStaging: Staging }) | null {
  if (process.getuid?.() !== 0) return null;
  const setprivPath = findSystemProgram('setpriv');
  const user = allocateSandboxUser();
  if (user === null) return null;
  let stageDirectory: string;
  try {
    stageDirectory = mkdtempSync(join(STAGE_PARENT, 'mass-stage-'));
  } catch (error) {
    releaseSandboxUser(user);
    throw error;
  }
  const common = { bwrapPath, setprivPath, user, stageDirectory };
  return {
    user,
    staging: staging({ ...common, roots }),
    probeStaging: staging({ ...common, roots: [] }),
    stageDirectory,
  };
}

/** The stage folder is empty on the host (its tmpfs lived in the staging bwrap's namespace only). */
function releaseUser(user: OwnUser): void {
  removeStage(user);
  releaseSandboxUser(user.user);
}

function removeStage(user: OwnUser): void {
  try {
    rmdirSync(user.stageDirectory);
  } catch {
    // Gone already.
  }
}

/**
 * A sandbox of its own user reads the readable directories as anyone may: one that only its owner may enter (a
 * checkout made under umask 077, say) would fail the harness inside, with no word of why.
 */
function assertReadableByOthers(readable: MovedMount[]): void {
  for (const { host } of readable) {
    const mode = statSync(host).mode;
    if ((mode & 0o005) !== 0o005) {
      throw new UserError(
        `the sandbox runs agents as a user of their own, who cannot read ${host} (mode ${(mode & 0o777).toString(8)}): ` +
          `make it readable by others (chmod -R o+rX, or install with umask 022) or pass --no-sandbox`,
      );
    }
  }
}
