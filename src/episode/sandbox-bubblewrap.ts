import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

import { UserError } from '../errors.js';
import type { Relay } from './forwarder.js';
import { SANDBOX_UID } from '../harness/sandbox-uid.js';
import { SANDBOX_HOSTNAME, type SystemEntry } from './sandbox-system.js';

export const SANDBOX_INSTALL_HINT = 'install bubblewrap (apt-get install bubblewrap) or pass --no-sandbox';

/** A directory of the host mounted at a path of its own inside. */
export interface MovedMount {
  host: string;
  inside: string;
}

/** A host directory shown at a fixed path inside, writable or read-only. */
export interface PlacedDirectory extends MovedMount {
  writable: boolean;
}

/**
 * What the sandbox shows of the host. Every host path is absolute and resolved. The workspace and the home are
 * mounted at fixed paths, the other mounts at their host paths.
 */
export interface BubblewrapMounts {
  workspace: MovedMount;
  home: MovedMount;
  /** The sandbox's own files, read-only. */
  state: MovedMount;
  /** Further writable directories, at their host paths. */
  writableDirectories: string[];
  /** Host directories shown at paths of their own (a verifier's `/tests` and `/logs/verifier`), after the workspace. */
  placed: PlacedDirectory[];
  /** Inside the workspace (host paths): stay read-only, and cannot be deleted, renamed or moved away with their directory. */
  readOnlyPaths: string[];
  /**
   * Host directories shown read-only (the harness, its Node, the proxy's socket directory), at their own paths (or
   * at the path a symbolic link to them has).
   */
  readableDirectories: MovedMount[];
  /** Inside what is shown: replaced by empty read-only folders. */
  hiddenDirectories: string[];
  /** Inside what is shown: replaced by `emptyFile`, read-only. */
  hiddenFiles: string[];
  /** An empty file of the host. */
  emptyFile: string;
  /** The host's programs, libraries and the part of /etc they read (`hostSystemEntries`). */
  system: SystemEntry[];
  /** The sandbox's own files in /etc (passwd, group, hosts): inside path and host file. */
  systemFiles: MovedMount[];
  /** Device nodes of the host shown in the sandbox's own /dev (a GPU's, `gpuDeviceNodes`); usually none. */
  devices: MovedMount[];
  tmpSizeBytes: number;
}

/** How the sandbox's bwrap is run. */
export interface BubblewrapIdentity {
  /** Where bwrap reads a host path from (see `sandbox-staging.ts`); the path itself when bwrap can reach it. */
  sourceOf: (hostPath: string) => string;
}

/** bwrap on PATH, or the given path; a `UserError` saying what to do when there is none. */
export function findBubblewrap(explicitPath?: string): string {
  const candidates =
    explicitPath !== undefined
      ? [explicitPath]
      : (process.env.PATH ?? '/usr/bin:/bin').split(':').map((directory) => join(directory, 'bwrap'));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Try the next one.
    }
  }
  const where = explicitPath !== undefined ? `at ${explicitPath}` : 'on PATH';
  throw new UserError(
    `the sandbox needs bubblewrap, and there is no bwrap ${where}: ${SANDBOX_INSTALL_HINT}`,
  );
}

/**
 * A program of util-linux the sandbox needs (`setpriv`, `prlimit`), in the system's folders: it runs inside, where
 * only those are shown.
 */
export function findSystemProgram(name: string): string {
  for (const directory of ['/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Try the next one.
    }
  }
  throw new UserError(
    `the sandbox needs ${name} (util-linux) in /usr/bin or /bin, and there is none: install util-linux or pass --no-sandbox`,
  );
}

const probes = new Map<string, Promise<void>>();

/**
 * Runs `true` under the same isolation as a real run (`command` wraps the bwrap command line as a real run's does:
 * through the staging bwrap and setpriv when the sandbox has a user of its own), once per way of running, so that a
 * machine where bubblewrap cannot create namespaces (a container without user namespaces, unprivileged user
 * namespaces turned off) fails before any episode starts.
 */
export function probeBubblewrap(
  bwrapPath: string,
  system: SystemEntry[],
  wrap: { key: string; command: (inner: string[]) => string[] } = {
    key: 'caller',
    command: (inner) => inner,
  },
): Promise<void> {
  const key = `${wrap.key}:${bwrapPath}`;
  let probe = probes.get(key);
  if (!probe) {
    const inner = [bwrapPath, ...isolationArguments(), ...systemArguments(system), '--proc', '/proc'];
    const [executable, ...args] = wrap.command([...inner, '--dev', '/dev', '--', 'true']);
    probe = new Promise<void>((resolve, reject) => {
      execFile(executable!, args, { timeout: 30_000 }, (error, _stdout, stderr) => {
        if (!error) return resolve();
        const reason = stderr.trim() || error.message;
        reject(
          new UserError(
            `bubblewrap (${bwrapPath}) cannot create a sandbox here: ${reason}; ${SANDBOX_INSTALL_HINT}`,
          ),
        );
      });
    });
    probes.set(key, probe);
    probe.catch(() => probes.delete(key));
  }
  return probe;
}

/**
 * Namespaces and privileges. `--cap-drop ALL` matters when the caller is root: bwrap then keeps every capability
 * inside, and `mount -o remount,rw /` undoes the read-only root (verified on this machine). The user inside is
 * always `SANDBOX_UID`, whatever uid runs bwrap.
 */
function isolationArguments(): string[] {
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--hostname',
    SANDBOX_HOSTNAME,
  ];
}

/** The host's system entries, read-only (symbolic links as the same links). */
function systemArguments(system: SystemEntry[]): string[] {
  const args: string[] = [];
  for (const entry of system) {
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  return args;
}

/**
 * The bwrap command line that runs `command` (already wrapped by the launcher if any) in `cwd` (a path inside).
 * The root is the sandbox's own tmpfs, read-only in the end, holding only what is mounted into it: the host's system
 * entries, the sandbox's /etc files, its own /dev, /proc and /tmp, the readable directories at their host paths, the
 * state, the workspace and the home at fixed paths, and the writable directories. The command's variables (`env`)
 * are given inside only, after `--clearenv`: the bwrap processes themselves run on the host, where a variable such as
 * a task's `LD_PRELOAD = "./x.so"` would load a library of the workspace into them before any isolation
 * (`sandboxLaunchEnvironment`).
 */
export function bubblewrapArguments(
  mounts: BubblewrapMounts,
  cwd: string,
  command: string[],
  identity: BubblewrapIdentity,
  env: Record<string, string> = {},
): string[] {
  const { sourceOf } = identity;
  const args = [...isolationArguments(), ...systemArguments(mounts.system)];
  for (const { inside, host } of mounts.systemFiles) args.push('--ro-bind', sourceOf(host), inside);
  args.push('--dev', '/dev', '--proc', '/proc');
  for (const { host, inside } of mounts.devices) args.push('--dev-bind', host, inside);
  // tmpfs lives in memory outside any process's resident set: cap it. /dev is a writable tmpfs too: make it
  // read-only but for /dev/shm (Python's multiprocessing needs it).
  args.push('--size', String(mounts.tmpSizeBytes), '--tmpfs', '/tmp');
  args.push('--size', String(Math.min(mounts.tmpSizeBytes, 256 * 1024 * 1024)), '--tmpfs', '/dev/shm');
  args.push('--remount-ro', '/dev');
  args.push('--symlink', '../tmp', '/var/tmp');
  // Parents before children; a readable directory inside a hidden one is mounted again over the hiding folder.
  const readable = [...mounts.readableDirectories].sort((a, b) => a.inside.length - b.inside.length);
  for (const { host, inside } of readable) args.push('--ro-bind', sourceOf(host), inside);
  for (const directory of mounts.hiddenDirectories) args.push('--tmpfs', directory);
  for (const file of mounts.hiddenFiles) args.push('--ro-bind', sourceOf(mounts.emptyFile), file);
  for (const { host, inside } of readable) {
    if (mounts.hiddenDirectories.some((hidden) => isInside(hidden, inside))) {
      args.push('--ro-bind', sourceOf(host), inside);
    }
  }
  args.push('--ro-bind', sourceOf(mounts.state.host), mounts.state.inside);
  for (const { host, inside } of [mounts.workspace, mounts.home]) args.push('--bind', sourceOf(host), inside);
  for (const directory of mounts.writableDirectories) args.push('--bind', sourceOf(directory), directory);
  for (const { host, inside, writable } of mounts.placed) {
    args.push(writable ? '--bind' : '--ro-bind', sourceOf(host), inside);
  }
  // A mount point cannot be renamed: binding each directory between the workspace and a protected file onto
  // itself stops `mv data elsewhere && echo forged > data/file`, which a read-only file alone allows.
  const inWorkspace = (path: string) => join(mounts.workspace.inside, relative(mounts.workspace.host, path));
  const pinned = new Set<string>();
  for (const path of mounts.readOnlyPaths) {
    for (const directory of directoriesBetween(mounts.workspace.host, path)) {
      if (pinned.has(directory)) continue;
      pinned.add(directory);
      args.push('--bind', sourceOf(directory), inWorkspace(directory));
    }
  }
  for (const path of mounts.readOnlyPaths) args.push('--ro-bind', sourceOf(path), inWorkspace(path));
  // The empty folders that hide directories stay read-only, so a write beside the workspace fails instead of
  // vanishing with the sandbox; the mounts inside them keep their own flags. So does the root.
  for (const directory of mounts.hiddenDirectories) args.push('--remount-ro', directory);
  args.push('--remount-ro', '/');
  args.push('--clearenv');
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  args.push('--chdir', cwd, '--', ...command);
  return args;
}

/**
 * The environment of the processes that start a sandbox on the host (the staging bwrap, setpriv, the sandbox's
 * bwrap): the run's marker alone, so that its processes are found. Nothing of the command's own variables, which
 * come from tasks, datasets and run configurations: the dynamic loader of a host process honours `LD_PRELOAD`,
 * `LD_LIBRARY_PATH`, `LD_AUDIT` or `GCONV_PATH`, and these processes run as the host's user (root, when mass is
 * root) before anything is isolated. The command gets its variables inside (`bubblewrapArguments`).
 */
export function sandboxLaunchEnvironment(marker: { name: string; value: string }): Record<string, string> {
  return { [marker.name]: marker.value };
}

/** Directories strictly between `root` and `path`, outermost first. */
export function directoriesBetween(root: string, path: string): string[] {
  const directories: string[] = [];
  for (
    let directory = dirname(path);
    directory !== root && isInside(root, directory);
    directory = dirname(directory)
  ) {
    directories.unshift(directory);
  }
  return directories;
}

export function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot !== '' && fromRoot !== '..' && !fromRoot.startsWith(`..${sep}`) && !isAbsolute(fromRoot);
}

/**
 * A POSIX shell prologue that starts the forwarder, waits until it listens (a FIFO it writes `ready` into), and
 * then execs the command. The forwarder is started from a subshell that exits at once, so it is re-parented to
 * the sandbox's init and never shows up as a child of the command; it dies with the sandbox. NODE_OPTIONS is the
 * command's own (the harness's guard, which the forwarder's Node may not even know): the forwarder runs without it.
 */
const LAUNCHER_SCRIPT = `node="$1"; forwarder="$2"; relays="$3"; shift 3
ready=/tmp/.mass-forwarder-ready
mkfifo "$ready" || exit 125
( unset NODE_OPTIONS; "$node" "$forwarder" 3 "$relays" 3>"$ready" </dev/null >/dev/null & )
read -r state <"$ready"
rm -f "$ready"
if [ "$state" != ready ]; then echo "mass sandbox: the proxy forwarder did not start" >&2; exit 125; fi
exec "$@"`;

export interface LauncherOptions {
  nodePath: string;
  forwarderPath: string;
  /** The ports the forwarder opens on the sandbox's loopback, each to a Unix socket (paths as seen inside). */
  relays: Relay[];
}

/** `command` preceded by the launcher that starts the forwarder first. */
export function withForwarder(launcher: LauncherOptions, command: string[]): string[] {
  const { nodePath, forwarderPath, relays } = launcher;
  return [
    '/bin/sh',
    '-c',
    LAUNCHER_SCRIPT,
    'mass-launcher',
    nodePath,
    forwarderPath,
    JSON.stringify(relays.map(({ port, socketPath }) => ({ port, socketPath }))),
    ...command,
  ];
}
