import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { HARNESS_NODE_FOLDER, type HarnessNode } from './harness-node.js';
import { writeHarnessPreload } from './harness-preload.js';

/**
 * The harness runs in the sandbox as the same user as the agent code it starts, and the kernel lets a process of the
 * same user take over another: `ptrace`, writing `/proc/<pid>/mem`, copying its descriptors with `pidfd_getfd` (the
 * pipe of its standard output, which the host records), reading its environment. All of these need the target to be
 * "dumpable", and the kernel makes a process undumpable when it starts from an executable its user cannot read. So
 * the harness starts from a copy of its Node that may be run but not read (mode 0111): agent code can still signal the
 * harness (which only ends its own episode), but it cannot act through it. Node's other way in, SIGUSR1 opening the
 * inspector on a loopback port, is closed by `--disable-sigusr1` (Node 22.14 and later; see `harnessGuardOptions`).
 */
export interface GuardedHarnessNode {
  /** The run-only copy of the harness's Node. */
  path: string;
  /** This Node knows `--disable-sigusr1`. */
  closesInspector: boolean;
}

const EXECUTE_ONLY = 0o111;

/** The run-only copy of `node`'s executable, made once per Node version (in the package, else in the temporary folder). */
export function guardedHarnessNode(node: HarnessNode): GuardedHarnessNode {
  const name = `node-${node.version}`;
  const folders = [
    join(HARNESS_NODE_FOLDER, 'guarded'),
    join(tmpdir(), `mass-guarded-node-${process.getuid?.() ?? 0}`),
  ];
  let lastError: unknown = null;
  for (const folder of folders) {
    const path = join(folder, name);
    try {
      mkdirSync(folder, { recursive: true, mode: 0o755 });
      if (!isExecuteOnlyCopy(path, node.path)) writeExecuteOnlyCopy(node.path, path);
      const closesInspector = knowsDisableSigusr1(node.version);
      if (!closesInspector) warnOnce(node.version);
      return { path, closesInspector };
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`cannot make a run-only copy of the harness's Node ${node.path}`, { cause: lastError });
}

/**
 * A copy made by this user, in a folder only this user can write (the fallback folder is in the shared /tmp, where
 * another user could have planted one); a folder or copy of anyone else's is refused.
 */
function isExecuteOnlyCopy(path: string, original: string): boolean {
  const uid = process.getuid?.() ?? 0;
  const folder = statSync(dirname(path));
  if (folder.uid !== uid || (folder.mode & 0o022) !== 0) {
    throw new Error(`${dirname(path)} is not a folder of this user that only it can write`);
  }
  if (!existsSync(path)) return false;
  const copy = statSync(path);
  if (copy.uid !== uid) throw new Error(`${path} is not this user's`);
  return (copy.mode & 0o777) === EXECUTE_ONLY && copy.size === statSync(original).size;
}

/** Written beside its final name and renamed into place: a process that finds it finds it whole. */
function writeExecuteOnlyCopy(original: string, path: string): void {
  const partial = `${path}.${process.pid}.partial`;
  try {
    copyFileSync(original, partial);
    chmodSync(partial, EXECUTE_ONLY);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
}

let warned = false;

function warnOnce(version: string): void {
  if (warned) return;
  warned = true;
  process.stderr.write(
    `warning: the harness runs on Node ${version}, which cannot turn off SIGUSR1: agent code could open its inspector ` +
      `and act through the harness. Install the harness's Node 22 (scripts/install.sh) for runs you need to trust.\n`,
  );
}

/** `--disable-sigusr1` came with Node 22.14; older Nodes would refuse the flag. */
function knowsDisableSigusr1(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 14);
}

/**
 * qwen-code's entry point starts the harness proper (`cli.js`) as a child of the same Node without passing its own
 * flags on, so `--disable-sigusr1` travels in NODE_OPTIONS; this preload then removes NODE_OPTIONS from the harness's
 * environment, so that the agents' shells (and a Node 20 among their tools, which would refuse the flag) never see it.
 */
const HARNESS_GUARD_SOURCE = `// Written by mass (src/harness/guarded-node.ts).
if (/[\\\\/]cli\\.js$/.test(process.argv[1] ?? '')) delete process.env.NODE_OPTIONS;
`;

export const HARNESS_GUARD_FILE_NAME = 'harness-guard.cjs';

/** Writes the preload into `directory` (the sandbox's own read-only files) and returns its path. */
export function writeHarnessGuard(directory: string): string {
  return writeHarnessPreload(directory, HARNESS_GUARD_FILE_NAME, HARNESS_GUARD_SOURCE);
}

/** The environment that closes the inspector, given where the sandbox shows the preload; none where Node cannot. */
export function harnessGuardOptions(
  guarded: GuardedHarnessNode,
  guardPathInside: string,
): Record<string, string> {
  return guarded.closesInspector ? { NODE_OPTIONS: `--disable-sigusr1 --require ${guardPathInside}` } : {};
}
