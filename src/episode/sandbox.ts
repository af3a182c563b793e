import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

import { UserError } from '../errors.js';
import { startHostForwarder, writeForwarder, type HostForwarder, type Relay } from './forwarder.js';
import {
  bubblewrapArguments,
  findBubblewrap,
  findSystemProgram,
  isInside,
  probeBubblewrap,
  withForwarder,
  type BubblewrapMounts,
  type LauncherOptions,
  type MovedMount,
  type PlacedDirectory,
} from './sandbox-bubblewrap.js';
import {
  DEFAULT_SAMPLE_INTERVAL_MS,
  kernelLimitArguments,
  withDefaultLimits,
  type SandboxLimits,
} from './sandbox-limits.js';
import { cudaVisibleDevices, gpuDeviceNodes } from './sandbox-gpu.js';
import { containerRunArguments, type ContainerImage } from './sandbox-container.js';
import { runProcessTree, type OutputSink, type ProcessTreeRun, type SandboxResult } from './sandbox-run.js';
import { staging, type Staging } from './sandbox-staging.js';
import { hostSystemEntries, writeSystemFiles, type SystemEntry } from './sandbox-system.js';
import {
  allocateSandboxUser,
  handBack,
  handOver,
  releaseSandboxUser,
  type SandboxUser,
} from './sandbox-user.js';

export type { OutputSink, SandboxResult } from './sandbox-run.js';
export type { SandboxLimitName, SandboxLimits } from './sandbox-limits.js';

/** Where each sandbox of its own user gets the empty folder its staged directories are mounted on (`Staging`). */
const STAGE_PARENT = '/tmp';

/**
 * `bubblewrap`: the isolation below. `unsandboxed` (the CLI's `--no-sandbox`): nothing is isolated, only the
 * limits and the process-tree kill apply, and opening the sandbox warns so.
 */
export type SandboxMode = 'bubblewrap' | 'unsandboxed';

/**
 * Inside a bubblewrap sandbox only what is listed here exists (an allow-list): the host's programs and libraries
 * (/usr, /bin, /lib…), the part of /etc they read (never shadow or other secrets) and the CPU topology, all read-only;
 * the sandbox's own passwd, group and hosts; a private /dev, /proc and /tmp (a size-capped tmpfs); the readable
 * directories (the harness and its Node) read-only at their host paths; the workspace at `/workspace` and the home at
 * `/home/agent` wherever they lie on the host (so what the agents see and write, and the training data made from it,
 * is the same wherever a run lives). Nothing else of the host: not the checkout that holds the harness, its git store
 * or its suites, not other runs, not the host's homes. No network but loopback and the forwarder to the proxies, no
 * capabilities, its own pid, IPC, UTS and user namespaces. When mass runs as root the processes inside run as a uid
 * of their own (`sandbox-user.ts`), so host files not readable by everyone stay unreadable. When the command exits,
 * its namespace dies with everything it started. Without a sandbox every path is the host's.
 */
export interface SandboxOptions {
  mode: SandboxMode;
  /** The agents' workspace, writable. */
  workspace: string;
  /** Further writable directories, created when missing; at their host paths inside. */
  writableDirectories?: string[];
  /**
   * Host directories shown at fixed paths of their own inside a bubblewrap sandbox (created when missing), writable
   * or read-only: a verifier's `/tests` and `/logs/verifier`. Without a sandbox a command finds them at their host
   * paths (`placedPath`).
   */
  placedDirectories?: PlacedDirectory[];
  /** HOME, writable, at `/home/agent` inside; default `<stateDirectory>/home`. */
  homeDirectory?: string;
  /** Files or directories in the workspace (absolute, or relative to it) that must stay as they are. */
  readOnlyPaths?: string[];
  /**
   * Paths inside what the sandbox shows (the system's folders, the readable directories) replaced by an empty
   * read-only folder, or for a file an empty read-only file: a key kept under /usr/local, say, or the tests beside a
   * package. Paths outside what is shown are not visible anyway and are skipped (the run directory, the suites), as
   * are those that do not exist. A readable directory inside a hidden one is still shown.
   */
  hiddenDirectories?: string[];
  /**
   * Directories shown read-only at their own paths (and at their resolved paths, when a symbolic link leads there):
   * the harness's package and its Node, say. The sandbox shows nothing else of the host beyond its system.
   */
  readableDirectories?: string[];
  /** Where the sandbox keeps its own files (the forwarder), e.g. `<episode dir>/sandbox`; read-only inside. */
  stateDirectory: string;
  /**
   * The episode proxy's Unix socket. Its directory is mounted read-only inside: give the socket one of its own.
   * The proxy must listen before `run`, which gives the socket to the sandbox's user.
   */
  proxySocketPath?: string;
  /** The forwarder's port on the sandbox's loopback; default 18080. Without a sandbox the system picks one. */
  forwarderPort?: number;
  /**
   * The episode's egress proxy's Unix socket, when its task allows network (`egress-proxy.ts`): reached like the
   * model proxy, through the forwarder, and named by the proxy variables of every command (`egressEnvironment`).
   * Its directory is mounted read-only inside: give the socket one of its own.
   */
  egressSocketPath?: string;
  /** The egress forwarder's port on the sandbox's loopback; default 18081. Without a sandbox the system picks one. */
  egressForwarderPort?: number;
  /**
   * A GPU of the host for this sandbox alone (its index, `/dev/nvidia<index>`; see `GpuPool`): its device node and the
   * driver's shared ones are shown in the sandbox's /dev, and `CUDA_VISIBLE_DEVICES` names it. Default none.
   */
  gpu?: number;
  /** Where the host's device nodes are; default /dev (tests give stand-ins). */
  devRoot?: string;
  /** The size cap of the private /tmp; default 1 GiB. */
  tmpSizeBytes?: number;
  /** Default: `bwrap` on PATH. */
  bwrapPath?: string;
  /**
   * Run the commands in a fresh container of this image (a benchmark task's own environment) instead of bubblewrap,
   * with the same mounts and no network but the relays to the proxies (`sandbox-container.ts`). Needs `mode:
   * 'bubblewrap'`: a sandbox either isolates or is refused.
   */
  container?: ContainerImage;
  /** The Node that runs the forwarder inside (its folder is shown); default this process's. */
  nodePath?: string;
  /** Where the unsandboxed-mode warning goes; default standard error. */
  warn?: (message: string) => void;
}

export interface SandboxCommand {
  command: string;
  args?: string[];
  /** The whole environment (nothing of this process's leaks in), on top of PATH, HOME, TMPDIR and LANG defaults.
   * PATH always starts with /usr/bin and /bin (Debian's python3 before any other), and HOME is the home directory. */
  env?: Record<string, string>;
  /** Default: the workspace. */
  cwd?: string;
  stdin?: string;
  stdout?: OutputSink;
  stderr?: OutputSink;
  /** The defaults of `withDefaultLimits` fill in what is not given. */
  limits?: SandboxLimits;
  /** How often the watchdog samples the tree; default 100 ms. */
  sampleIntervalMs?: number;
  /** Kills the tree; the result then says `aborted`. */
  signal?: AbortSignal;
}

export const DEFAULT_FORWARDER_PORT = 18080;
export const DEFAULT_EGRESS_FORWARDER_PORT = 18081;
/** Hosts the proxy variables leave direct: the model proxy's forwarder is on loopback. */
export const NO_PROXY_HOSTS = '127.0.0.1,localhost';
/** Where the workspace and the home are inside a bubblewrap sandbox, wherever they are on the host. */
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_HOME = '/home/agent';
/** The sandbox's own files (the forwarder), read-only, at a path that names no run or episode. */
const SANDBOX_STATE = '/run/mass-sandbox';
const DEFAULT_TMP_SIZE_BYTES = 1024 ** 3;
export const RUN_MARKER_VARIABLE = 'MASS_SANDBOX_RUN';
const FIRST_ON_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

export const UNSANDBOXED_WARNING =
  'running agent code WITHOUT a sandbox (--no-sandbox): it can read and write anything this user can, reach the ' +
  'network and change protected files; only the CPU, memory, process, disk and wall-clock limits and the ' +
  'process-tree kill apply';

/** How an isolated sandbox is started (bubblewrap, or a container of a task's own image); null without one. */
interface BubblewrapSetup {
  bwrapPath: string;
  prlimitPath: string;
  launcher: LauncherOptions | null;
  /** The sandbox's own uid and how its bwrap is started as it; null when it runs as the caller. */
  user: { user: SandboxUser; staging: Staging; stageDirectory: string } | null;
  /** The image its commands run in instead of bubblewrap, with the same mounts; null for bubblewrap. */
  container: ContainerImage | null;
}

/**
 * Where agent-executed code runs. Open one per episode, run the harness in it (`run` may be called more than
 * once), close it. Code inside reaches the episode's proxy at `proxyBaseUrl`.
 */
export class Sandbox {
  private closed = false;

  private constructor(
    readonly mode: SandboxMode,
    private readonly mounts: BubblewrapMounts,
    /** The home on the host (where to write the harness's settings). */
    readonly homeDirectory: string,
    /** `http://127.0.0.1:<port>` for code inside, when a proxy socket was given. */
    readonly proxyBaseUrl: string | null,
    private readonly bubblewrap: BubblewrapSetup | null,
    private readonly hostForwarders: HostForwarder[],
    /** The proxy sockets' directories, given to the sandbox's user while it runs. */
    private readonly socketDirectories: string[],
    /** `http://127.0.0.1:<port>` of the egress proxy for code inside, when an egress socket was given. */
    readonly egressProxyUrl: string | null,
    /** The host GPU given to the sandbox, if any. */
    readonly gpu: number | null,
  ) {}

  static async open(options: SandboxOptions): Promise<Sandbox> {
    const workspace = existingDirectory(options.workspace, 'workspace');
    const stateDirectory = createdDirectory(options.stateDirectory);
    const homeDirectory = createdDirectory(options.homeDirectory ?? join(stateDirectory, 'home'));
    const writableDirectories = (options.writableDirectories ?? []).map(createdDirectory);
    const placed = (options.placedDirectories ?? []).map((directory) => ({
      ...directory,
      host: createdDirectory(directory.host),
    }));
    const readOnlyPaths = (options.readOnlyPaths ?? []).map((path) => protectedPath(workspace, path));
    const requestedHidden = (options.hiddenDirectories ?? []).flatMap((path) => {
      let real: string;
      try {
        real = realpathSync(path);
      } catch {
        return [];
      }
      const mountedOver = [workspace, homeDirectory, ...writableDirectories].find(
        (mounted) => mounted === real || isInside(mounted, real),
      );
      if (mountedOver) {
        throw new UserError(
          `cannot hide ${path}: it lies inside ${mountedOver}, which the sandbox mounts writable`,
        );
      }
      return [real];
    });
    const proxySocketPath =
      options.proxySocketPath === undefined ? null : socketInExistingDirectory(options.proxySocketPath);
    const egressSocketPath =
      options.egressSocketPath === undefined ? null : socketInExistingDirectory(options.egressSocketPath);
    const socketDirectories = [
      ...new Set(
        [proxySocketPath, egressSocketPath].flatMap((path) => (path === null ? [] : [dirname(path)])),
      ),
    ];
    const relaysOnHost: Relay[] = [
      ...(proxySocketPath === null
        ? []
        : [{ port: options.forwarderPort ?? DEFAULT_FORWARDER_PORT, socketPath: proxySocketPath }]),
      ...(egressSocketPath === null
        ? []
        : [
            {
              port: options.egressForwarderPort ?? DEFAULT_EGRESS_FORWARDER_PORT,
              socketPath: egressSocketPath,
            },
          ]),
    ];
    const bubblewrapMode = options.mode === 'bubblewrap';
    const container = bubblewrapMode ? (options.container ?? null) : null;
    const forwarderNode = realpathSync(options.nodePath ?? process.execPath);
    const shownReadable = readableMounts([
      ...socketDirectories,
      ...(options.readableDirectories ?? []),
      ...(bubblewrapMode && relaysOnHost.length > 0 ? [dirname(forwarderNode)] : []),
    ]);
    // A container brings its own system; bubblewrap shows the host's.
    const system = bubblewrapMode && container === null ? hostSystemEntries() : [];
    const hidden = shownHiddenPaths(requestedHidden, system, shownReadable);
    const hiddenFiles = hidden.filter((path) => !statSync(path).isDirectory());
    // This process's Node in /usr/bin, say: shown already, at the same path, unless a hidden path covers it.
    const readable = shownReadable.filter(
      (mount) =>
        mount.inside !== mount.host ||
        !systemShows(system, mount.host) ||
        hidden.some((path) => path === mount.host || isInside(path, mount.host)),
    );
    chmodSync(stateDirectory, 0o755);
    const mounts: BubblewrapMounts = {
      workspace: { host: workspace, inside: SANDBOX_WORKSPACE },
      home: { host: homeDirectory, inside: SANDBOX_HOME },
      state: { host: stateDirectory, inside: SANDBOX_STATE },
      writableDirectories,
      placed,
      readOnlyPaths,
      readableDirectories: readable,
      hiddenDirectories: hidden.filter((path) => !hiddenFiles.includes(path)),
      hiddenFiles,
      emptyFile: emptyFile(stateDirectory),
      system,
      systemFiles: bubblewrapMode && container === null ? writeSystemFiles(stateDirectory, SANDBOX_HOME) : [],
      devices:
        bubblewrapMode && options.gpu !== undefined ? gpuDeviceNodes(options.gpu, options.devRoot) : [],
      tmpSizeBytes: options.tmpSizeBytes ?? DEFAULT_TMP_SIZE_BYTES,
    };

    if (!bubblewrapMode) {
      (options.warn ?? ((message) => process.stderr.write(`warning: ${message}\n`)))(UNSANDBOXED_WARNING);
      const hostForwarders: HostForwarder[] = [];
      const urlOf = async (socketPath: string | null): Promise<string | null> => {
        if (socketPath === null) return null;
        const forwarder = await startHostForwarder(socketPath);
        hostForwarders.push(forwarder);
        return `http://127.0.0.1:${forwarder.port}`;
      };
      try {
        const proxyBaseUrl = await urlOf(proxySocketPath);
        const egressProxyUrl = await urlOf(egressSocketPath);
        return new Sandbox(
          'unsandboxed',
          mounts,
          homeDirectory,
          proxyBaseUrl,
          null,
          hostForwarders,
          [],
          egressProxyUrl,
          options.gpu ?? null,
        );
      } catch (error) {
        await Promise.all(hostForwarders.map((forwarder) => forwarder.close()));
        throw error;
      }
    }
    const launcher =
      relaysOnHost.length === 0
        ? null
        : {
            nodePath: forwarderNode,
            forwarderPath: join(SANDBOX_STATE, relative(stateDirectory, writeForwarder(stateDirectory))),
            relays: relaysOnHost,
          };
    const urlOf = (socketPath: string | null): string | null => {
      const relay = relaysOnHost.find((candidate) => candidate.socketPath === socketPath);
      return relay === undefined ? null : `http://127.0.0.1:${relay.port}`;
    };
    const isolated = (setup: BubblewrapSetup) =>
      new Sandbox(
        'bubblewrap',
        mounts,
        homeDirectory,
        urlOf(proxySocketPath),
        setup,
        [],
        socketDirectories,
        urlOf(egressSocketPath),
        options.gpu ?? null,
      );
    if (container !== null) {
      return isolated({ bwrapPath: '', prlimitPath: '', launcher, user: null, container });
    }
    const bwrapPath = findBubblewrap(options.bwrapPath);
    const prlimitPath = findSystemProgram('prlimit');
    if (process.getuid?.() === 0) {
      assertReadableByOthers(readable.filter((mount) => !socketDirectories.includes(mount.host)));
    }
    const user = sandboxUser(bwrapPath, [
      workspace,
      homeDirectory,
      stateDirectory,
      ...writableDirectories,
      ...placed.map((directory) => directory.host),
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
    return isolated({ bwrapPath, prlimitPath, launcher, user, container: null });
  }

  /** The workspace on the host. */
  get workspace(): string {
    return this.mounts.workspace.host;
  }

  /** The workspace as the command sees it: `/workspace` in a bubblewrap sandbox. */
  get workspaceInside(): string {
    return this.bubblewrap === null ? this.mounts.workspace.host : this.mounts.workspace.inside;
  }

  /** HOME as the command sees it: `/home/agent` in a bubblewrap sandbox. */
  get homeInside(): string {
    return this.bubblewrap === null ? this.mounts.home.host : this.mounts.home.inside;
  }

  /** A host path as the command sees it: inside the workspace, the home, the sandbox's own files or a placed directory, moved with them; any other unchanged. */
  pathInside(hostPath: string): string {
    for (const { host, inside } of this.bubblewrap === null
      ? []
      : [this.mounts.workspace, this.mounts.home, this.mounts.state, ...this.mounts.placed]) {
      if (hostPath === host) return inside;
      if (isInside(host, hostPath)) return join(inside, relative(host, hostPath));
    }
    return hostPath;
  }

  /** Where a command finds a placed directory: its inside path in a bubblewrap sandbox, else its host path. */
  placedPath(inside: string): string {
    const directory = this.mounts.placed.find((candidate) => candidate.inside === inside);
    if (!directory) throw new Error(`no directory is placed at ${inside}`);
    return this.bubblewrap === null ? directory.host : directory.inside;
  }

  /** What the agents write, and what the disk limit measures. */
  private get writableDirectories(): string[] {
    return [
      this.mounts.workspace.host,
      this.mounts.home.host,
      ...this.mounts.writableDirectories,
      ...this.mounts.placed.filter((directory) => directory.writable).map((directory) => directory.host),
    ];
  }

  run(command: SandboxCommand): Promise<SandboxResult> {
    const cwd = this.pathInside(resolve(this.mounts.workspace.host, command.cwd ?? '.'));
    const marker = { name: RUN_MARKER_VARIABLE, value: randomUUID() };
    const env = {
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      ...command.env,
      ...(this.egressProxyUrl === null ? {} : egressEnvironment(this.egressProxyUrl)),
      ...(this.gpu === null
        ? {}
        : { CUDA_VISIBLE_DEVICES: cudaVisibleDevices(this.gpu, this.bubblewrap !== null) }),
      HOME: this.homeInside,
      PATH: sandboxPath(command.env?.PATH),
      [marker.name]: marker.value,
    };
    const commandLine = [command.command, ...(command.args ?? [])];
    const limits = withDefaultLimits(command.limits ?? {});
    const common = {
      env,
      marker,
      stdin: command.stdin,
      stdout: command.stdout,
      stderr: command.stderr,
      limits,
      sampleIntervalMs: command.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS,
      diskDirectories: this.writableDirectories,
      signal: command.signal,
    };
    if (this.bubblewrap === null) {
      const [executable, ...args] = commandLine;
      return runProcessTree({
        ...common,
        executable: executable!,
        args,
        cwd,
        ownProcessGroup: true,
        sandboxed: false,
      });
    }
    const { bwrapPath, prlimitPath, launcher, user, container } = this.bubblewrap;
    if (container !== null) return this.runInContainer(container, launcher, commandLine, cwd, common);
    if (user) handOver(this.ownedDirectories, user.user);
    // The kernel's limits first, so that the launcher, the forwarder and everything the command starts inherit them.
    const inside = [
      prlimitPath,
      ...kernelLimitArguments(limits),
      '--',
      ...(launcher ? withForwarder(launcher, commandLine) : commandLine),
    ];
    const sandboxArguments = bubblewrapArguments(this.mounts, cwd, inside, {
      sourceOf: user ? user.staging.sourceOf : (path) => path,
    });
    const full = user
      ? user.staging.command([bwrapPath, ...sandboxArguments])
      : [bwrapPath, ...sandboxArguments];
    return runProcessTree({
      ...common,
      executable: full[0]!,
      args: full.slice(1),
      cwd: this.mounts.workspace.host,
      ownProcessGroup: false,
      sandboxed: true,
    });
  }

  /** The command in a fresh container of the image, removed when it ends, however it ends. */
  private async runInContainer(
    container: ContainerImage,
    launcher: LauncherOptions | null,
    commandLine: string[],
    cwd: string,
    common: Omit<ProcessTreeRun, 'executable' | 'args' | 'cwd' | 'ownProcessGroup' | 'sandboxed'>,
  ): Promise<SandboxResult> {
    const name = `mass-${randomUUID()}`;
    const [executable, ...args] = containerRunArguments({
      container,
      name,
      mounts: this.mounts,
      cwd,
      env: common.env,
      limits: common.limits,
      command: launcher ? withForwarder(launcher, commandLine) : commandLine,
    });
    try {
      // The engine's client is the host's program: it runs with the host's environment (DOCKER_HOST,
      // XDG_RUNTIME_DIR…); the command inside gets only the sandbox's, given with --env above.
      const hostEnvironment = Object.fromEntries(
        Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
      return await runProcessTree({
        ...common,
        env: { ...hostEnvironment, [common.marker.name]: common.marker.value },
        executable: executable!,
        args,
        cwd: this.mounts.workspace.host,
        ownProcessGroup: true,
        sandboxed: true,
      });
    } finally {
      // Killing the engine's client leaves its container running: remove it by name (gone already when it ended).
      await new Promise<void>((resolve) => {
        execFile(container.engine, ['rm', '--force', name], () => resolve());
      });
    }
  }

  /** What the sandbox's own user owns while it runs: what it writes, and the proxies' sockets it connects to. */
  private get ownedDirectories(): string[] {
    return [...this.writableDirectories, ...this.socketDirectories];
  }

  /**
   * Stops the host forwarder; in a sandbox of its own user, gives everything that user owns in the workspace, the
   * home and the writable directories back to this process's user and frees the uid. Call it once no `run` is in
   * progress.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.hostForwarders.map((forwarder) => forwarder.close()));
    const user = this.bubblewrap?.user;
    if (!user) return;
    handBack(this.ownedDirectories, user.user, { uid: process.getuid!(), gid: process.getgid!() });
    releaseUser(user);
  }
}

/**
 * The sandbox's own user when this process is root (null otherwise), with the staging that starts its bwrap and a
 * bare one for the probe.
 */
function sandboxUser(
  bwrapPath: string,
  roots: string[],
): { user: SandboxUser; staging: Staging; probeStaging: Staging; stageDirectory: string } | null {
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
function releaseUser(user: { user: SandboxUser; stageDirectory: string }): void {
  try {
    rmdirSync(user.stageDirectory);
  } catch {
    // Gone already.
  }
  releaseSandboxUser(user.user);
}

/**
 * The variables that send a command's HTTP(S) clients (curl, pip, uv, requests, npm, git) through the egress proxy,
 * all but the model's loopback address.
 */
export function egressEnvironment(proxyUrl: string): Record<string, string> {
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    all_proxy: proxyUrl,
    PIP_PROXY: proxyUrl,
    npm_config_proxy: proxyUrl,
    npm_config_https_proxy: proxyUrl,
    NO_PROXY: NO_PROXY_HOSTS,
    no_proxy: NO_PROXY_HOSTS,
  };
}

/** /usr/bin and /bin first, then the caller's PATH (default: /usr/local/bin and this process's Node). */
export function sandboxPath(callerPath: string | undefined): string {
  const rest = (callerPath ?? `/usr/local/bin:${dirname(process.execPath)}`)
    .split(':')
    .filter((entry) => entry !== '' && !FIRST_ON_PATH.includes(entry));
  return [...new Set([...FIRST_ON_PATH, ...rest])].join(':');
}

/** What a hidden file shows inside: nothing. */
function emptyFile(stateDirectory: string): string {
  const path = join(stateDirectory, 'hidden-file');
  writeFileSync(path, '');
  chmodSync(path, 0o644);
  return path;
}

/**
 * The readable directories as mounts: each at its resolved path, and also at the path given when a symbolic link
 * leads there (so that a command named by that path runs).
 */
function readableMounts(directories: string[]): MovedMount[] {
  const mounts = new Map<string, MovedMount>();
  for (const directory of directories) {
    const host = existingDirectory(directory, 'readable directory');
    for (const inside of new Set([host, resolve(directory)])) mounts.set(inside, { host, inside });
  }
  return [...mounts.values()];
}

/**
 * The hidden paths that lie inside what the sandbox shows (a system entry, or strictly inside a readable directory):
 * the others are not visible anyway. One inside another hidden path is hidden already.
 */
function shownHiddenPaths(requested: string[], system: SystemEntry[], readable: MovedMount[]): string[] {
  const shown = (path: string): boolean =>
    systemShows(system, path) || readable.some((mount) => isInside(mount.inside, path));
  // A readable directory reached through a symbolic link is shown at the link's path too: what is hidden at its real
  // path is hidden there as well.
  const atEveryPath = requested.flatMap((path) => [
    path,
    ...readable
      .filter((mount) => mount.inside !== mount.host && isInside(mount.host, path))
      .map((mount) => join(mount.inside, relative(mount.host, path))),
  ]);
  const unique = [...new Set(atEveryPath)];
  return unique.filter((path) => shown(path) && !unique.some((other) => isInside(other, path)));
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

/** Whether the host's system entries show `path` (at its own path, read-only). */
function systemShows(system: SystemEntry[], path: string): boolean {
  return system.some((entry) => entry.kind === 'bind' && (entry.path === path || isInside(entry.path, path)));
}

function existingDirectory(path: string, what: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new UserError(`the ${what} ${path} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw new UserError(`the ${what} ${path} is not a directory`);
  return real;
}

/** The socket need not exist yet (the proxy may start later); its directory must, to be mounted. */
function socketInExistingDirectory(socketPath: string): string {
  return join(existingDirectory(dirname(socketPath), 'proxy socket directory'), basename(socketPath));
}

function createdDirectory(path: string): string {
  mkdirSync(path, { recursive: true });
  return realpathSync(path);
}

function protectedPath(workspace: string, path: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(workspace, path));
  } catch {
    throw new UserError(`protected path ${path} does not exist in the workspace ${workspace}`);
  }
  if (!isInside(workspace, real)) {
    throw new UserError(`protected path ${path} is not inside the workspace ${workspace}`);
  }
  return real;
}
