import { dirname, join, relative, resolve } from 'node:path';

import { UserError } from '../errors.js';
import type { Relay } from './forwarder.js';
import type { IsolatedCommand } from './isolation.js';
import {
  isInside,
  type BubblewrapMounts,
  type MovedMount,
  type PlacedDirectory,
} from './sandbox-bubblewrap.js';
import { cudaVisibleDevices } from './sandbox-gpu.js';
import { DEFAULT_SAMPLE_INTERVAL_MS, withDefaultLimits, type SandboxLimits } from './sandbox-limits.js';
import type { OutputSink } from './sandbox-run.js';
import type { SystemEntry } from './sandbox-system.js';

/**
 * The layout every environment of an episode's own shares (`sandbox-bubblewrap-environment.ts`,
 * `sandbox-host-environment.ts`): what is mounted where, what is hidden, what each command's environment, folder
 * and limits are. Pure: every function here takes paths the caller has resolved (`sandbox-resolve.ts`) and does no
 * I/O, so that its tests start no process and touch no file.
 */

export const DEFAULT_FORWARDER_PORT = 18080;
export const DEFAULT_EGRESS_FORWARDER_PORT = 18081;
/** Hosts the proxy variables leave direct: the model proxy's forwarder is on loopback. */
export const NO_PROXY_HOSTS = '127.0.0.1,localhost';
/** Where the workspace and the home are inside a bubblewrap sandbox, wherever they are on the host. */
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_HOME = '/home/agent';
/** The sandbox's own files (the forwarder), read-only, at a path that names no run or episode. */
export const SANDBOX_STATE = '/run/mass-sandbox';
export const DEFAULT_TMP_SIZE_BYTES = 1024 ** 3;
export const RUN_MARKER_VARIABLE = 'MASS_SANDBOX_RUN';
const FIRST_ON_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

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

/** A path to hide, resolved, and whether it is a folder (an empty folder hides it) or not (an empty file does). */
export interface HiddenPath {
  path: string;
  directory: boolean;
}

/** What the layout is made of: host paths resolved by `resolveSandboxPaths`, and the system the sandbox shows. */
export interface SandboxLayoutInput {
  workspace: string;
  homeDirectory: string;
  stateDirectory: string;
  writableDirectories: string[];
  placed: PlacedDirectory[];
  readOnlyPaths: string[];
  /** The requested paths to hide that exist (`assertHiddenOutsideWritable` checked them). */
  hidden: HiddenPath[];
  /** The readable directories as mounts (`readableMounts`). */
  readable: MovedMount[];
  /** The host's system entries a bubblewrap sandbox shows; none without one. */
  system: SystemEntry[];
  systemFiles: MovedMount[];
  devices: MovedMount[];
  emptyFile: string;
  tmpSizeBytes: number;
}

/**
 * Every mount of the sandbox: the workspace, the home and the state at their fixed paths; the hidden paths that lie
 * inside what the sandbox shows, split into folders and files; the readable directories less those the system shows
 * already at the same path (unless a hidden path covers them, when they are shown again over it).
 */
export function sandboxMounts(input: SandboxLayoutInput): BubblewrapMounts {
  const hidden = shownHiddenPaths(input.hidden, input.system, input.readable);
  const readable = input.readable.filter(
    (mount) =>
      mount.inside !== mount.host ||
      !systemShows(input.system, mount.host) ||
      hidden.some(({ path }) => path === mount.host || isInside(path, mount.host)),
  );
  return {
    workspace: { host: input.workspace, inside: SANDBOX_WORKSPACE },
    home: { host: input.homeDirectory, inside: SANDBOX_HOME },
    state: { host: input.stateDirectory, inside: SANDBOX_STATE },
    writableDirectories: input.writableDirectories,
    placed: input.placed,
    readOnlyPaths: input.readOnlyPaths,
    readableDirectories: readable,
    hiddenDirectories: hidden.filter((path) => path.directory).map(({ path }) => path),
    hiddenFiles: hidden.filter((path) => !path.directory).map(({ path }) => path),
    emptyFile: input.emptyFile,
    system: input.system,
    systemFiles: input.systemFiles,
    devices: input.devices,
    tmpSizeBytes: input.tmpSizeBytes,
  };
}

/** Refuses a path to hide that lies in (or is) a directory the sandbox mounts writable: it cannot be hidden there. */
export function assertHiddenOutsideWritable(
  hidden: Array<{ given: string; path: string }>,
  writable: string[],
): void {
  for (const { given, path } of hidden) {
    const mountedOver = writable.find((mounted) => mounted === path || isInside(mounted, path));
    if (mountedOver) {
      throw new UserError(
        `cannot hide ${given}: it lies inside ${mountedOver}, which the sandbox mounts writable`,
      );
    }
  }
}

/**
 * The readable directories as mounts: each at its resolved path, and also at the path given when a symbolic link
 * leads there (so that a command named by that path runs). `host` is the resolved path of `given`.
 */
export function readableMounts(directories: Array<{ given: string; host: string }>): MovedMount[] {
  const mounts = new Map<string, MovedMount>();
  for (const { given, host } of directories) {
    for (const inside of new Set([host, resolve(given)])) mounts.set(inside, { host, inside });
  }
  return [...mounts.values()];
}

/**
 * The hidden paths that lie inside what the sandbox shows (a system entry, or strictly inside a readable directory):
 * the others are not visible anyway. One inside another hidden path is hidden already. A readable directory reached
 * through a symbolic link is shown at the link's path too: what is hidden at its real path is hidden there as well.
 */
export function shownHiddenPaths(
  requested: HiddenPath[],
  system: SystemEntry[],
  readable: MovedMount[],
): HiddenPath[] {
  const shown = (path: string): boolean =>
    systemShows(system, path) || readable.some((mount) => isInside(mount.inside, path));
  const atEveryPath = requested.flatMap(({ path, directory }) => [
    { path, directory },
    ...readable
      .filter((mount) => mount.inside !== mount.host && isInside(mount.host, path))
      .map((mount) => ({ path: join(mount.inside, relative(mount.host, path)), directory })),
  ]);
  const unique = [...new Map(atEveryPath.map((hidden) => [hidden.path, hidden])).values()];
  return unique.filter(({ path }) => shown(path) && !unique.some((other) => isInside(other.path, path)));
}

/** Whether the host's system entries show `path` (at its own path, read-only). */
export function systemShows(system: SystemEntry[], path: string): boolean {
  return system.some((entry) => entry.kind === 'bind' && (entry.path === path || isInside(entry.path, path)));
}

/** The ports the forwarder opens on the sandbox's loopback, each to a proxy's socket (the model's first). */
export function forwarderRelays(sockets: {
  proxySocketPath: string | null;
  egressSocketPath: string | null;
  forwarderPort?: number;
  egressForwarderPort?: number;
}): Relay[] {
  return [
    ...(sockets.proxySocketPath === null
      ? []
      : [{ port: sockets.forwarderPort ?? DEFAULT_FORWARDER_PORT, socketPath: sockets.proxySocketPath }]),
    ...(sockets.egressSocketPath === null
      ? []
      : [
          {
            port: sockets.egressForwarderPort ?? DEFAULT_EGRESS_FORWARDER_PORT,
            socketPath: sockets.egressSocketPath,
          },
        ]),
  ];
}

/** The folders of the proxies' sockets, once each (mounted read-only, given to the sandbox's user while it runs). */
export function socketDirectories(relays: Relay[]): string[] {
  return [...new Set(relays.map((relay) => dirname(relay.socketPath)))];
}

/** `http://127.0.0.1:<port>` of the relay to `socketPath`, or null when there is none. */
export function relayUrl(relays: Relay[], socketPath: string | null): string | null {
  const relay = relays.find((candidate) => candidate.socketPath === socketPath);
  return relay === undefined ? null : `http://127.0.0.1:${relay.port}`;
}

/** The folders whose contents move with them inside: the workspace, the home, the state, the placed folders. */
function movedFolders(mounts: BubblewrapMounts): MovedMount[] {
  return [mounts.workspace, mounts.home, mounts.state, ...mounts.placed];
}

/** A host path as a command in a bubblewrap sandbox sees it: moved with its folder, any other unchanged. */
export function pathInside(mounts: BubblewrapMounts, hostPath: string): string {
  for (const { host, inside } of movedFolders(mounts)) {
    if (hostPath === host) return inside;
    if (isInside(host, hostPath)) return join(inside, relative(host, hostPath));
  }
  return hostPath;
}

/** The host path of a path as a command in a bubblewrap sandbox sees it (`pathInside` undone). */
export function hostPathOf(mounts: BubblewrapMounts, insidePath: string): string {
  for (const { host, inside } of movedFolders(mounts)) {
    if (insidePath === inside) return host;
    if (isInside(inside, insidePath)) return join(host, relative(inside, insidePath));
  }
  return insidePath;
}

/** Where a command finds the directory placed at `inside`: there in a bubblewrap sandbox, else at its host path. */
export function placedPath(mounts: BubblewrapMounts, inside: string, isolated: boolean): string {
  const directory = mounts.placed.find((candidate) => candidate.inside === inside);
  if (!directory) throw new Error(`no directory is placed at ${inside}`);
  return isolated ? directory.inside : directory.host;
}

/** What the agents write, and what the disk limit measures. */
export function writableRoots(mounts: BubblewrapMounts): string[] {
  return [
    mounts.workspace.host,
    mounts.home.host,
    ...mounts.writableDirectories,
    ...mounts.placed.filter((directory) => directory.writable).map((directory) => directory.host),
  ];
}

/** How one command runs, whatever runs it: its folder (as it sees it), environment, limits and what is measured. */
export interface CommandPlan {
  cwd: string;
  env: Record<string, string>;
  limits: SandboxLimits;
  sampleIntervalMs: number;
  diskDirectories: string[];
}

/**
 * One command's plan in a sandbox laid out as `mounts`: started in the workspace (or `cwd`, relative to it), with
 * TMPDIR and LANG defaults under the command's own variables, the egress proxy's variables and the GPU's, HOME, the
 * sandbox's PATH and the run's marker over them; the default limits fill in what is not given.
 */
export function commandPlan(
  mounts: BubblewrapMounts,
  command: SandboxCommand,
  context: {
    isolated: boolean;
    egressProxyUrl: string | null;
    gpu: number | null;
    marker: { name: string; value: string };
  },
): CommandPlan {
  const inside = (hostPath: string) => (context.isolated ? pathInside(mounts, hostPath) : hostPath);
  return {
    cwd: inside(resolve(mounts.workspace.host, command.cwd ?? '.')),
    env: {
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      ...command.env,
      ...(context.egressProxyUrl === null ? {} : egressEnvironment(context.egressProxyUrl)),
      ...(context.gpu === null
        ? {}
        : { CUDA_VISIBLE_DEVICES: cudaVisibleDevices(context.gpu, context.isolated) }),
      HOME: inside(mounts.home.host),
      PATH: sandboxPath(command.env?.PATH),
      [context.marker.name]: context.marker.value,
    },
    limits: withDefaultLimits(command.limits ?? {}),
    sampleIntervalMs: command.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS,
    diskDirectories: writableRoots(mounts),
  };
}

/**
 * An isolated command (`Isolation.exec`) as a sandbox runs it: its first word the executable, its folder a host path
 * (`hostPath` of the folder it names as it sees it). A sandbox runs every command as its own user: one that names
 * another is refused.
 */
export function runCommandOf(
  kind: string,
  command: IsolatedCommand,
  hostPath: (insidePath: string) => string,
): SandboxCommand {
  if (command.user) {
    throw new Error(`a ${kind} sandbox runs every command as its own user, not as ${command.user}`);
  }
  const [executable, ...args] = command.command;
  if (executable === undefined) throw new Error('an isolated command needs at least its executable');
  return {
    command: executable,
    args,
    ...(command.env === undefined ? {} : { env: command.env }),
    ...(command.cwd === undefined ? {} : { cwd: hostPath(command.cwd) }),
    ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
    ...(command.stdout === undefined ? {} : { stdout: command.stdout }),
    ...(command.stderr === undefined ? {} : { stderr: command.stderr }),
    ...(command.limits === undefined ? {} : { limits: command.limits }),
    ...(command.signal === undefined ? {} : { signal: command.signal }),
  };
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
