import { chmodSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

import { UserError } from '../errors.js';
import { isInside, type MovedMount, type PlacedDirectory } from './sandbox-bubblewrap.js';
import {
  assertHiddenOutsideWritable,
  DEFAULT_TMP_SIZE_BYTES,
  forwarderRelays,
  readableMounts,
  socketDirectories,
  type HiddenPath,
} from './sandbox-layout.js';
import type { Relay } from './forwarder.js';
import type { SandboxOptions } from './sandbox-options.js';

/** The host side of a sandbox's options: every path checked, made when it may be, and resolved. */
export interface ResolvedSandbox {
  workspace: string;
  stateDirectory: string;
  homeDirectory: string;
  writableDirectories: string[];
  placed: PlacedDirectory[];
  readOnlyPaths: string[];
  hidden: HiddenPath[];
  readable: MovedMount[];
  /** The relays to the proxies' sockets (the model's, then the egress proxy's), at the ports given or the defaults. */
  relays: Relay[];
  proxySocketPath: string | null;
  egressSocketPath: string | null;
  socketDirectories: string[];
  /** The Node that runs the forwarder inside, resolved. */
  forwarderNode: string;
  /** An empty file of the state directory, shown over each hidden file. */
  emptyFile: string;
  tmpSizeBytes: number;
}

/**
 * Checks and resolves what a sandbox is asked to show, with a clear error for each path that cannot work: the
 * workspace and each protected path must exist (a protected path inside the workspace), a path to hide must not lie
 * in a writable directory, a proxy's socket must have its folder. The state, home and writable directories are made
 * when missing. `isolated`: a bubblewrap sandbox, which also shows the forwarder's Node when it relays to a proxy.
 */
export function resolveSandbox(options: SandboxOptions, isolated: boolean): ResolvedSandbox {
  const workspace = existingDirectory(options.workspace, 'workspace');
  const stateDirectory = createdDirectory(options.stateDirectory);
  const homeDirectory = createdDirectory(options.homeDirectory ?? join(stateDirectory, 'home'));
  const writableDirectories = (options.writableDirectories ?? []).map(createdDirectory);
  const placed = (options.placedDirectories ?? []).map((directory) => ({
    ...directory,
    host: createdDirectory(directory.host),
  }));
  const readOnlyPaths = (options.readOnlyPaths ?? []).map((path) => protectedPath(workspace, path));
  const requestedHidden = (options.hiddenDirectories ?? []).flatMap((given) => {
    try {
      return [{ given, path: realpathSync(given) }];
    } catch {
      return [];
    }
  });
  assertHiddenOutsideWritable(requestedHidden, [workspace, homeDirectory, ...writableDirectories]);
  const proxySocketPath =
    options.proxySocketPath === undefined ? null : socketInExistingDirectory(options.proxySocketPath);
  const egressSocketPath =
    options.egressSocketPath === undefined ? null : socketInExistingDirectory(options.egressSocketPath);
  const relays = forwarderRelays({
    proxySocketPath,
    egressSocketPath,
    forwarderPort: options.forwarderPort,
    egressForwarderPort: options.egressForwarderPort,
  });
  const sockets = socketDirectories(relays);
  const forwarderNode = realpathSync(options.nodePath ?? process.execPath);
  const readable = readableMounts(
    [
      ...sockets,
      ...(options.readableDirectories ?? []),
      ...(isolated && relays.length > 0 ? [dirname(forwarderNode)] : []),
    ].map((given) => ({ given, host: existingDirectory(given, 'readable directory') })),
  );
  const hidden = requestedHidden.map(({ path }) => ({ path, directory: statSync(path).isDirectory() }));
  chmodSync(stateDirectory, 0o755);
  return {
    workspace,
    stateDirectory,
    homeDirectory,
    writableDirectories,
    placed,
    readOnlyPaths,
    hidden,
    readable,
    relays,
    proxySocketPath,
    egressSocketPath,
    socketDirectories: sockets,
    forwarderNode,
    emptyFile: emptyFile(stateDirectory),
    tmpSizeBytes: options.tmpSizeBytes ?? DEFAULT_TMP_SIZE_BYTES,
  };
}

/** What a hidden file shows inside: nothing. */
function emptyFile(stateDirectory: string): string {
  const path = join(stateDirectory, 'hidden-file');
  writeFileSync(path, '');
  chmodSync(path, 0o644);
  return path;
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
