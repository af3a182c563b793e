import { randomUUID } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

import { UserError } from '../errors.js';
import { startHostForwarder, writeForwarder, type HostForwarder } from './forwarder.js';
import {
  bubblewrapArguments,
  findBubblewrap,
  isInside,
  probeBubblewrap,
  withForwarder,
  type BubblewrapMounts,
  type LauncherOptions,
  type RootEntry,
} from './sandbox-bubblewrap.js';
import { DEFAULT_SAMPLE_INTERVAL_MS, type SandboxLimits } from './sandbox-limits.js';
import { runProcessTree, type OutputSink, type SandboxResult } from './sandbox-run.js';

export type { OutputSink, SandboxResult } from './sandbox-run.js';
export type { SandboxLimitName, SandboxLimits } from './sandbox-limits.js';

/**
 * `bubblewrap`: the isolation below. `unsandboxed` (the CLI's `--no-sandbox`): nothing is isolated, only the
 * limits and the process-tree kill apply, and opening the sandbox warns so.
 */
export type SandboxMode = 'bubblewrap' | 'unsandboxed';

/**
 * Inside a bubblewrap sandbox: the host's / read-only, a private /dev and /proc, a fresh /tmp (a size-capped
 * tmpfs; the host's /tmp is not visible), the workspace at `/workspace` and the home at `/home/agent` wherever they
 * lie on the host (so what the agents see and write, and the training data made from it, is the same wherever a
 * run lives), the host's home folders (`/home`, `/root`) and the hidden paths behind empty read-only ones, no
 * network but loopback and the forwarder to the proxy, no capabilities, its own pid, IPC, UTS and user namespaces.
 * When the command exits, its namespace dies with everything it started. Without a sandbox every path is the
 * host's.
 */
export interface SandboxOptions {
  mode: SandboxMode;
  /** The agents' workspace, writable. */
  workspace: string;
  /** Further writable directories, created when missing; at their host paths inside. */
  writableDirectories?: string[];
  /** HOME, writable, at `/home/agent` inside; default `<stateDirectory>/home`. */
  homeDirectory?: string;
  /** Files or directories in the workspace (absolute, or relative to it) that must stay as they are. */
  readOnlyPaths?: string[];
  /**
   * Directories outside the workspace replaced by an empty read-only tmpfs inside, and files by an empty read-only
   * file (those that do not exist are skipped); /run, /root and /home are always hidden (a key in a dotfile there
   * could otherwise be copied into the workspace, and from there into a judge's prompt or the training data). The
   * rest of the root stays readable, and code inside can connect to any Unix socket it can see (a read-only mount
   * does not stop `connect`): hide the run directory, where other episodes' proxy sockets live, and the task suite
   * with its reference solutions. This sandbox's own mounts show through.
   */
  hiddenDirectories?: string[];
  /** Directories shown read-only even when they lie inside a hidden one (the harness's own files, say). */
  readableDirectories?: string[];
  /** Where the sandbox keeps its own files (the forwarder), e.g. `<episode dir>/sandbox`; read-only inside. */
  stateDirectory: string;
  /** The episode proxy's Unix socket. Its directory is mounted read-only inside: give the socket one of its own. */
  proxySocketPath?: string;
  /** The forwarder's port on the sandbox's loopback; default 18080. Without a sandbox the system picks one. */
  forwarderPort?: number;
  /** The size cap of the private /tmp; default 1 GiB. */
  tmpSizeBytes?: number;
  /** Default: `bwrap` on PATH. */
  bwrapPath?: string;
  /** The Node that runs the forwarder inside; default this process's. */
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
  limits?: SandboxLimits;
  /** How often the watchdog samples the tree; default 100 ms. */
  sampleIntervalMs?: number;
  /** Kills the tree; the result then says `aborted`. */
  signal?: AbortSignal;
}

export const DEFAULT_FORWARDER_PORT = 18080;
/** Where the workspace and the home are inside a bubblewrap sandbox, wherever they are on the host. */
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_HOME = '/home/agent';
/** The sandbox's own files (the forwarder), read-only, at a path that names no run or episode. */
const SANDBOX_STATE = '/run/mass-sandbox';
const DEFAULT_TMP_SIZE_BYTES = 1024 ** 3;
export const RUN_MARKER_VARIABLE = 'MASS_SANDBOX_RUN';
const FIRST_ON_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];
/** System sockets (Docker's, D-Bus) live in /run, and nothing inside needs them; the host's homes hold keys. */
const ALWAYS_HIDDEN = ['/run', '/root', '/home'];

export const UNSANDBOXED_WARNING =
  'running agent code WITHOUT a sandbox (--no-sandbox): it can read and write anything this user can, reach the ' +
  'network and change protected files; only the CPU, memory and wall-clock limits and the process-tree kill apply';

/**
 * Where agent-executed code runs. Open one per episode, run the harness in it (`run` may be called more than
 * once), close it. Code inside reaches the episode's proxy at `proxyBaseUrl`.
 */
export class Sandbox {
  private constructor(
    readonly mode: SandboxMode,
    private readonly mounts: BubblewrapMounts,
    /** The home on the host (where to write the harness's settings). */
    readonly homeDirectory: string,
    /** `http://127.0.0.1:<port>` for code inside, when a proxy socket was given. */
    readonly proxyBaseUrl: string | null,
    private readonly bwrapPath: string | null,
    private readonly launcher: LauncherOptions | null,
    private readonly hostForwarder: HostForwarder | null,
  ) {}

  static async open(options: SandboxOptions): Promise<Sandbox> {
    const workspace = existingDirectory(options.workspace, 'workspace');
    const stateDirectory = createdDirectory(options.stateDirectory);
    const homeDirectory = createdDirectory(options.homeDirectory ?? join(stateDirectory, 'home'));
    const writableDirectories = (options.writableDirectories ?? []).map(createdDirectory);
    const readOnlyPaths = (options.readOnlyPaths ?? []).map((path) => protectedPath(workspace, path));
    const requestedHidden = [...ALWAYS_HIDDEN, ...(options.hiddenDirectories ?? [])].flatMap((path) => {
      let real: string;
      try {
        real = realpathSync(path);
      } catch {
        return [];
      }
      const mountedOver = [workspace, homeDirectory, ...writableDirectories].find((mounted) =>
        isInside(mounted, real),
      );
      if (mountedOver) {
        throw new UserError(
          `cannot hide ${path}: it lies inside ${mountedOver}, which the sandbox mounts writable`,
        );
      }
      return [real];
    });
    // A folder inside another hidden one is hidden already (and would not exist to mount over); /tmp is private
    // to the sandbox anyway (an episode directory in /tmp asks to hide it).
    const hidden = [...new Set(requestedHidden)].filter(
      (path) => path !== '/tmp' && !requestedHidden.some((other) => isInside(other, path)),
    );
    const hiddenFiles = hidden.filter((path) => !statSync(path).isDirectory());
    const proxySocketPath =
      options.proxySocketPath === undefined ? null : socketInExistingDirectory(options.proxySocketPath);
    const mounts: BubblewrapMounts = {
      workspace: { host: workspace, inside: SANDBOX_WORKSPACE },
      home: { host: homeDirectory, inside: SANDBOX_HOME },
      state: { host: stateDirectory, inside: SANDBOX_STATE },
      writableDirectories,
      readOnlyPaths,
      readOnlyMounts: [
        ...(proxySocketPath === null ? [] : [dirname(proxySocketPath)]),
        ...(options.readableDirectories ?? []).map((directory) =>
          existingDirectory(directory, 'readable directory'),
        ),
      ],
      hiddenDirectories: hidden.filter((path) => !hiddenFiles.includes(path)),
      hiddenFiles,
      emptyFile: emptyFile(stateDirectory),
      rootEntries: options.mode === 'bubblewrap' ? hostRootEntries() : [],
      tmpSizeBytes: options.tmpSizeBytes ?? DEFAULT_TMP_SIZE_BYTES,
    };

    if (options.mode === 'unsandboxed') {
      (options.warn ?? ((message) => process.stderr.write(`warning: ${message}\n`)))(UNSANDBOXED_WARNING);
      const hostForwarder = proxySocketPath === null ? null : await startHostForwarder(proxySocketPath);
      const proxyBaseUrl = hostForwarder && `http://127.0.0.1:${hostForwarder.port}`;
      return new Sandbox('unsandboxed', mounts, homeDirectory, proxyBaseUrl, null, null, hostForwarder);
    }
    const bwrapPath = findBubblewrap(options.bwrapPath);
    await probeBubblewrap(bwrapPath);
    const port = options.forwarderPort ?? DEFAULT_FORWARDER_PORT;
    const launcher =
      proxySocketPath === null
        ? null
        : {
            nodePath: options.nodePath ?? process.execPath,
            forwarderPath: join(SANDBOX_STATE, relative(stateDirectory, writeForwarder(stateDirectory))),
            socketPath: proxySocketPath,
            port,
          };
    const proxyBaseUrl = launcher && `http://127.0.0.1:${port}`;
    return new Sandbox('bubblewrap', mounts, homeDirectory, proxyBaseUrl, bwrapPath, launcher, null);
  }

  /** The workspace on the host. */
  get workspace(): string {
    return this.mounts.workspace.host;
  }

  /** The workspace as the command sees it: `/workspace` in a bubblewrap sandbox. */
  get workspaceInside(): string {
    return this.bwrapPath === null ? this.mounts.workspace.host : this.mounts.workspace.inside;
  }

  /** HOME as the command sees it: `/home/agent` in a bubblewrap sandbox. */
  get homeInside(): string {
    return this.bwrapPath === null ? this.mounts.home.host : this.mounts.home.inside;
  }

  /** A host path as the command sees it: inside the workspace or the home, moved with them; any other unchanged. */
  pathInside(hostPath: string): string {
    for (const { host, inside } of this.bwrapPath === null ? [] : [this.mounts.workspace, this.mounts.home]) {
      if (hostPath === host) return inside;
      if (isInside(host, hostPath)) return join(inside, relative(host, hostPath));
    }
    return hostPath;
  }

  run(command: SandboxCommand): Promise<SandboxResult> {
    const cwd = this.pathInside(resolve(this.mounts.workspace.host, command.cwd ?? '.'));
    const marker = { name: RUN_MARKER_VARIABLE, value: randomUUID() };
    const env = {
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      ...command.env,
      HOME: this.homeInside,
      PATH: sandboxPath(command.env?.PATH),
      [marker.name]: marker.value,
    };
    const commandLine = [command.command, ...(command.args ?? [])];
    const common = {
      env,
      marker,
      stdin: command.stdin,
      stdout: command.stdout,
      stderr: command.stderr,
      limits: command.limits ?? {},
      sampleIntervalMs: command.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS,
      signal: command.signal,
    };
    if (this.bwrapPath === null) {
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
    const inside = this.launcher ? withForwarder(this.launcher, commandLine) : commandLine;
    return runProcessTree({
      ...common,
      executable: this.bwrapPath,
      args: bubblewrapArguments(this.mounts, cwd, inside),
      cwd: this.mounts.workspace.host,
      ownProcessGroup: false,
      sandboxed: true,
    });
  }

  async close(): Promise<void> {
    await this.hostForwarder?.close();
  }
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
  return path;
}

/** The host's `/`, read when the sandbox opens. */
function hostRootEntries(): RootEntry[] {
  return readdirSync('/').flatMap((name): RootEntry[] => {
    const path = `/${name}`;
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return [{ name, kind: 'symlink', target: readlinkSync(path) }];
      if (stat.isDirectory()) return [{ name, kind: 'directory' }];
      if (stat.isFile()) return [{ name, kind: 'file' }];
    } catch {
      // Gone meanwhile.
    }
    return [];
  });
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
