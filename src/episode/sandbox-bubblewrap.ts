import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

import { UserError } from '../errors.js';

export const SANDBOX_INSTALL_HINT = 'install bubblewrap (apt-get install bubblewrap) or pass --no-sandbox';

/** A directory of the host mounted at a path of its own inside. */
export interface MovedMount {
  host: string;
  inside: string;
}

/** An entry of the host's `/`, shown read-only inside (a symbolic link as the same link). */
export type RootEntry =
  { name: string; kind: 'directory' | 'file' } | { name: string; kind: 'symlink'; target: string };

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
  /** Inside the workspace (host paths): stay read-only, and cannot be deleted, renamed or moved away with their directory. */
  readOnlyPaths: string[];
  /** Host paths the sandbox needs to read although they sit under /tmp or a hidden directory. */
  readOnlyMounts: string[];
  /** Replaced by empty read-only folders. */
  hiddenDirectories: string[];
  /** Replaced by `emptyFile`, read-only. */
  hiddenFiles: string[];
  /** An empty file of the host. */
  emptyFile: string;
  /** The host's `/` as it was when the sandbox opened; `/proc`, `/dev` and `/tmp` are the sandbox's own. */
  rootEntries: RootEntry[];
  tmpSizeBytes: number;
}

/** Root entries the sandbox makes itself rather than showing the host's. */
const OWN_ROOT_ENTRIES = new Set(['proc', 'dev', 'tmp']);

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

const probes = new Map<string, Promise<void>>();

/**
 * Runs `true` under the same isolation as a real run, once per bwrap binary, so that a machine where bubblewrap
 * cannot create namespaces (a container without user namespaces, say) fails before any episode starts.
 */
export function probeBubblewrap(bwrapPath: string): Promise<void> {
  let probe = probes.get(bwrapPath);
  if (!probe) {
    probe = new Promise<void>((resolve, reject) => {
      const args = [...isolationArguments(), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
      execFile(bwrapPath, [...args, '--', 'true'], { timeout: 30_000 }, (error, _stdout, stderr) => {
        if (!error) return resolve();
        const reason = stderr.trim() || error.message;
        reject(
          new UserError(
            `bubblewrap (${bwrapPath}) cannot create a sandbox here: ${reason}; ${SANDBOX_INSTALL_HINT}`,
          ),
        );
      });
    });
    probes.set(bwrapPath, probe);
    probe.catch(() => probes.delete(bwrapPath));
  }
  return probe;
}

/**
 * Namespaces and privileges. `--cap-drop ALL` matters when the caller is root: bwrap then keeps every capability
 * inside, and `mount -o remount,rw /` undoes the read-only root (verified on this machine).
 */
function isolationArguments(): string[] {
  return ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
}

/**
 * The bwrap command line that runs `command` (already wrapped by the launcher if any) in `cwd` (a path inside).
 * The root is the sandbox's own, read-only in the end: the host's top-level entries are bound into it one by one,
 * so that the workspace and the home can have mount points of their own (`/workspace` need not exist on the host)
 * and hidden top-level folders (`/home`, `/root`) are never shown at all.
 */
export function bubblewrapArguments(mounts: BubblewrapMounts, cwd: string, command: string[]): string[] {
  const args = isolationArguments();
  const hiddenAtTop = new Set(mounts.hiddenDirectories.filter((directory) => dirname(directory) === '/'));
  const ownAtTop = new Set(
    [mounts.workspace.inside, mounts.home.inside].map((path) => `/${path.split('/')[1]!}`),
  );
  for (const entry of mounts.rootEntries) {
    const path = `/${entry.name}`;
    if (OWN_ROOT_ENTRIES.has(entry.name) || hiddenAtTop.has(path) || ownAtTop.has(path)) continue;
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, path);
    else args.push('--ro-bind', path, path);
  }
  args.push('--dev', '/dev', '--proc', '/proc');
  // tmpfs lives in memory outside any process's resident set: cap it. /dev is a writable tmpfs too: make it
  // read-only but for /dev/shm (Python's multiprocessing needs it).
  args.push('--size', String(mounts.tmpSizeBytes), '--tmpfs', '/tmp');
  args.push('--size', String(Math.min(mounts.tmpSizeBytes, 256 * 1024 * 1024)), '--tmpfs', '/dev/shm');
  args.push('--remount-ro', '/dev');
  for (const directory of mounts.hiddenDirectories) args.push('--tmpfs', directory);
  for (const file of mounts.hiddenFiles) args.push('--ro-bind', mounts.emptyFile, file);
  for (const path of mounts.readOnlyMounts) args.push('--ro-bind', path, path);
  args.push('--ro-bind', mounts.state.host, mounts.state.inside);
  for (const { host, inside } of [mounts.workspace, mounts.home]) args.push('--bind', host, inside);
  for (const directory of mounts.writableDirectories) args.push('--bind', directory, directory);
  // A mount point cannot be renamed: binding each directory between the workspace and a protected file onto
  // itself stops `mv data elsewhere && echo forged > data/file`, which a read-only file alone allows.
  const inWorkspace = (path: string) => join(mounts.workspace.inside, relative(mounts.workspace.host, path));
  const pinned = new Set<string>();
  for (const path of mounts.readOnlyPaths) {
    for (const directory of directoriesBetween(mounts.workspace.host, path)) {
      if (pinned.has(directory)) continue;
      pinned.add(directory);
      args.push('--bind', directory, inWorkspace(directory));
    }
  }
  for (const path of mounts.readOnlyPaths) args.push('--ro-bind', path, inWorkspace(path));
  // The empty folders that hide directories stay read-only, so a write beside the workspace fails instead of
  // vanishing with the sandbox; the mounts inside them keep their own flags. So does the root.
  for (const directory of mounts.hiddenDirectories) args.push('--remount-ro', directory);
  args.push('--remount-ro', '/');
  args.push('--chdir', cwd, '--', ...command);
  return args;
}

/** Directories strictly between `root` and `path`, outermost first. */
function directoriesBetween(root: string, path: string): string[] {
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
 * the sandbox's init and never shows up as a child of the command; it dies with the sandbox.
 */
const LAUNCHER_SCRIPT = `node="$1"; forwarder="$2"; socket="$3"; port="$4"; shift 4
ready=/tmp/.mass-forwarder-ready
mkfifo "$ready" || exit 125
( "$node" "$forwarder" "$socket" "$port" 3 3>"$ready" </dev/null >/dev/null & )
read -r state <"$ready"
rm -f "$ready"
if [ "$state" != ready ]; then echo "mass sandbox: the proxy forwarder did not start" >&2; exit 125; fi
exec "$@"`;

export interface LauncherOptions {
  nodePath: string;
  forwarderPath: string;
  socketPath: string;
  port: number;
}

/** `command` preceded by the launcher that starts the forwarder first. */
export function withForwarder(launcher: LauncherOptions, command: string[]): string[] {
  const { nodePath, forwarderPath, socketPath, port } = launcher;
  return [
    '/bin/sh',
    '-c',
    LAUNCHER_SCRIPT,
    'mass-launcher',
    nodePath,
    forwarderPath,
    socketPath,
    String(port),
    ...command,
  ];
}
