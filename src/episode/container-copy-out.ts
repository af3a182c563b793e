import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

import { SystemError } from '../errors.js';
import { fileNameText } from '../file-name.js';
import { HAND_BACK_LIMITS, type HandBackReport } from './hand-back-files.js';
import { ChunkReader, StreamLimitReached, tarEntries, type TarEntry } from './tar-entries.js';

/**
 * A folder of a container copied out to the host without trusting its size: the engine's `cp` writes it as a tar
 * stream (`<engine> cp <container>:<folder> -`) that is read here, entry by entry, and only folders and regular files
 * within the limits are written. An engine's own `cp` to a host folder writes whatever the container holds: a sparse
 * file of a terabyte, which costs nothing inside, would fill the host's disk. Links are never made (they are listed),
 * special files and names that are not UTF-8 are left out, and once more than `maxStreamBytes` have come through the
 * copy is stopped and the rest left out, so that even skipped data is bounded. A folder that code inside replaced with a
 * link or a file comes back empty, the replacement listed.
 */

export interface CopyOutLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** The most bytes read from the stream, skipped data included. */
  maxStreamBytes: number;
}

export const COPY_OUT_LIMITS: CopyOutLimits = {
  ...HAND_BACK_LIMITS,
  maxStreamBytes: HAND_BACK_LIMITS.maxTotalBytes + HAND_BACK_LIMITS.maxFileBytes,
};

/** What the copy left out and the links it met, for the hand-back's report. */
export type CopyOutReport = Pick<HandBackReport, 'links' | 'leftOut'>;

/**
 * Reads the tar stream `source` of one folder (its first path component is that folder's own name) into `destination`
 * (which must not exist). Returns null when the stream holds no entry at all.
 */
export async function extractFolderStream(
  source: AsyncIterable<Buffer>,
  destination: string,
  limits: CopyOutLimits = COPY_OUT_LIMITS,
): Promise<CopyOutReport | null> {
  const reader = new ChunkReader(source, limits.maxStreamBytes);
  const report: CopyOutReport = { links: [], leftOut: [] };
  const state: Extraction = {
    destination,
    limits,
    report,
    folders: new Map(),
    files: 0,
    bytes: 0,
    sawRoot: false,
  };
  try {
    for await (const { entry, data } of tarEntries(reader)) await extractEntry(state, entry, data);
    // What follows the archive's end block (the engine's padding) is read too, so that the engine ends on its own.
    await reader.drain();
  } catch (error) {
    if (!(error instanceof StreamLimitReached)) throw error;
    report.leftOut.push({
      path: '…',
      reason: `the rest: a copy reads at most ${error.limit} bytes from the container, and this one was stopped there`,
    });
  }
  const { folders, sawRoot } = state;
  if (!sawRoot) return null;
  // Each folder's own mode once its files are in, innermost first (a read-only folder would have refused them).
  for (const [relative, mode] of [...folders].sort(([a], [b]) => b.length - a.length)) {
    await chmod(path.join(destination, relative), (mode & 0o777) | 0o700).catch(() => undefined);
  }
  return report;
}

/** How long the engine may take to end once its whole archive was read. */
const ENGINE_EXIT_MS = 60_000;

/**
 * Copies `inside` of a container out into `destination` through `extractFolderStream`; null when the container has no
 * such path. The engine's process is ended once the stream is no longer wanted.
 */
export async function copyOutOfContainer(
  engine: string,
  container: string,
  inside: string,
  destination: string,
  limits: CopyOutLimits = COPY_OUT_LIMITS,
): Promise<CopyOutReport | null> {
  const child = spawn(engine, ['cp', `${container}:${inside}`, '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  let report: CopyOutReport | null;
  try {
    report = await extractFolderStream(child.stdout, destination, limits);
  } catch (error) {
    stop(child);
    await exited.catch(() => undefined);
    throw error;
  }
  // A whole archive was read to its end and the engine ends on its own; a copy stopped at its limit is ended here.
  const stopped = report?.leftOut.some((entry) => entry.path === '…') ?? false;
  if (stopped) stop(child);
  const ending = setTimeout(() => stop(child), ENGINE_EXIT_MS);
  const code = await exited.finally(() => clearTimeout(ending));
  if (report === null) {
    if (code !== 0) return null;
    throw new SystemError(`${engine} cp of ${inside} gave an empty archive`);
  }
  if (code !== 0 && !stopped) {
    throw new SystemError(
      `${engine} cp of ${inside} failed: ${stderr.trim().split('\n').slice(-3).join('\n')}`,
    );
  }
  return report;
}

interface Extraction {
  destination: string;
  limits: CopyOutLimits;
  report: CopyOutReport;
  /** Folders made, relative, with the mode their entry gave. */
  folders: Map<string, number>;
  files: number;
  bytes: number;
  sawRoot: boolean;
}

/** One entry of the stream: a folder made, a file written, or the reason it was not. */
async function extractEntry(
  state: Extraction,
  entry: TarEntry,
  data: (sink?: (chunk: Buffer) => Promise<void>) => Promise<void>,
): Promise<void> {
  const { destination, limits, report, folders } = state;
  const name = entryPath(entry.name);
  if (!state.sawRoot) {
    state.sawRoot = true;
    if (name === null || name.relative !== '') {
      throw new SystemError(
        `the copy of a folder began with ${describe(entry)} of another name; nothing handed back`,
      );
    }
    await mkdir(destination, { mode: 0o700 });
    // What code inside put in the folder's place (`ln -s / /app`) is what it left: an empty hand-back that says so,
    // never an error that would stop the trial (and, thrown through the benchmark, every trial after it).
    if (entry.type !== 'directory') {
      if (entry.type === 'symlink')
        report.links.push({ path: '.', target: fileNameText(entry.linkName).text });
      report.leftOut.push({
        path: '.',
        reason: `${describe(entry)} in the folder's place: nothing handed back`,
      });
      return;
    }
    folders.set('', entry.mode);
    return;
  }
  const leaveOut = (reason: string) =>
    report.leftOut.push({ path: name?.relative ?? fileNameText(entry.name).text, reason });
  if (name === null || name.relative === '') return void leaveOut('a path that is not a plain relative one');
  const { relative } = name;
  if (!name.utf8) return void leaveOut('its name is not UTF-8');
  const parent = path.posix.dirname(relative);
  if (!folders.has(parent === '.' ? '' : parent)) return void leaveOut('inside a folder that was not copied');
  const target = path.join(destination, relative);
  if (entry.type === 'directory') {
    const made = await mkdir(target, { mode: 0o700 }).then(
      () => true,
      async () => (await lstat(target).catch(() => null))?.isDirectory() === true,
    );
    if (made) folders.set(relative, entry.mode);
    else leaveOut('a folder where something else was copied first');
  } else if (entry.type === 'symlink') {
    report.links.push({ path: relative, target: fileNameText(entry.linkName).text });
  } else if (entry.type !== 'file') {
    leaveOut(`${describe(entry)}, never copied`);
  } else if (entry.size > limits.maxFileBytes) {
    leaveOut(`${entry.size} bytes, over the ${limits.maxFileBytes} handed back`);
  } else if (state.files >= limits.maxFiles || state.bytes + entry.size > limits.maxTotalBytes) {
    leaveOut(`past the hand-back's limits (${limits.maxFiles} files, ${limits.maxTotalBytes} bytes)`);
  } else {
    const problem = await writeFile(target, entry, data);
    if (problem !== null) return void leaveOut(problem);
    state.files++;
    state.bytes += entry.size;
  }
}

/** Ends the engine's copy: its output is not read any further (a paused pipe would otherwise never close). */
function stop(child: ChildProcessByStdio<null, Readable, Readable>): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child.stdout.destroy();
}

/** The entry's path below the copied folder, or null when it climbs out or is absolute. */
function entryPath(raw: Buffer): { relative: string; utf8: boolean } | null {
  const { text, utf8 } = fileNameText(raw);
  const parts = text.split('/').filter((part) => part !== '' && part !== '.');
  if (text.startsWith('/') || parts.includes('..') || parts.length === 0) return null;
  return { relative: parts.slice(1).join('/'), utf8 };
}

/** A new regular file with the entry's data; a reason when it could not be written (nothing of it is kept then). */
async function writeFile(
  target: string,
  entry: TarEntry,
  data: (sink?: (chunk: Buffer) => Promise<void>) => Promise<void>,
): Promise<string | null> {
  let handle;
  try {
    handle = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (error) {
    return `could not be written (${(error as NodeJS.ErrnoException).code ?? 'failed'})`;
  }
  try {
    await data(async (chunk) => {
      await handle.write(chunk);
    });
    await handle.chmod(entry.mode & 0o777);
    return null;
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  } finally {
    await handle.close();
  }
}

function describe(entry: TarEntry): string {
  const kinds: Record<TarEntry['type'], string> = {
    file: 'a file',
    directory: 'a folder',
    symlink: 'a symbolic link',
    hardlink: `a hard link to ${fileNameText(entry.linkName).text}`,
    fifo: 'a FIFO',
    device: 'a device',
    other: 'an entry of another kind',
  };
  return kinds[entry.type];
}
