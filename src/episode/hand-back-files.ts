import { constants, type BigIntStats } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readlink, rm, symlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

import { SystemError } from '../errors.js';
import { entryKind, errorCode, walkedEntry } from '../tasks/walked-entry.js';

/**
 * What came back from a trial to the host, and what did not. Paths are relative to the source, `/`-separated; bytes of
 * a name that is not UTF-8 are written `%XX` (such an entry is left out).
 */
export interface HandBackReport {
  files: number;
  bytes: number;
  /** Symbolic links met: never followed; recreated as links only when `links` is `keep`. */
  links: Array<{ path: string; target: string }>;
  /** Files and folders whose set-user-ID, set-group-ID or sticky bit was not carried over. */
  clearedBits: string[];
  /** Entries not handed back, and why (special files, names that are not UTF-8, past the limits, changed while read). */
  leftOut: Array<{ path: string; reason: string }>;
}

interface HandBackOptions {
  /** `list` (the default): a link is left out of the copy and listed with its target; `keep`: also made again, as a
   * link, in the destination (its target is never read, here or by this function). */
  links?: 'list' | 'keep';
  /** Remove the source once it is copied (a move that never keeps the trial's inodes, owners or mode bits). */
  removeSource?: boolean;
  maxFiles?: number;
  maxFileBytes?: number;
  maxTotalBytes?: number;
}

/** A trial's logs and workspace are far below these; a runaway one stops here instead of filling the host's disk. */
export const HAND_BACK_LIMITS = {
  maxFiles: 100_000,
  maxFileBytes: 1024 ** 3,
  maxTotalBytes: 8 * 1024 ** 3,
} as const;

/** Only so many left-out entries are listed one by one; the rest are counted in a last entry. */
const LISTED = 200;
const COPY_CHUNK = 1024 * 1024;

/**
 * Copies the tree at `source` (written by a trial: an agent, a task's own scripts, its verifier) into `destination`
 * (made here, owned by this process's user), so that the host may read it and run nothing it did not choose:
 *
 * - Files are new files of the host's user with the source's permission bits only (`0o777`): no set-user-ID,
 *   set-group-ID or sticky bit comes back, whoever owned the source (root in a container). Each one cleared is listed.
 * - A file is opened only after `lstat` says it is a regular file, with `O_NOFOLLOW` (and `O_NONBLOCK`, so that a
 *   FIFO swapped in cannot block), and copied only when the opened file is the one inspected (same device and inode)
 *   in a folder that is still the one walked.
 * - Symbolic links are never followed: listed with their target, and made again as links only when asked.
 * - FIFOs, sockets and devices are left out, as are names that are not UTF-8, and files past the limits.
 *
 * Meant for a tree no process of the trial writes any more (its sandbox or container has ended); the identity checks
 * narrow, not close, the window left to one that still runs.
 */
export async function handBackFiles(
  source: string,
  destination: string,
  options: HandBackOptions = {},
): Promise<HandBackReport> {
  const limits = { ...HAND_BACK_LIMITS, ...options };
  const report: HandBackReport = { files: 0, bytes: 0, links: [], clearedBits: [], leftOut: [] };
  const rootStats = await lstat(source, { bigint: true });
  if (!rootStats.isDirectory()) {
    throw new SystemError(`${source}: not a folder (${entryKind(rootStats)}); nothing handed back`);
  }
  await mkdir(destination, { recursive: true, mode: 0o700 });
  const stack: Array<{ relative: string; stats: BigIntStats }> = [{ relative: '', stats: rootStats }];
  const folders: Array<{ relative: string; mode: number }> = [];
  for (let folder = stack.pop(); folder !== undefined; folder = stack.pop()) {
    const here = path.join(source, folder.relative);
    let names: Buffer[];
    try {
      names = await readdir(here, { encoding: 'buffer' });
    } catch (error) {
      report.leftOut.push({
        path: folder.relative || '.',
        reason: `could not be listed (${errorCode(error)})`,
      });
      continue;
    }
    if (!(await sameEntry(here, folder.stats))) {
      report.leftOut.push({ path: folder.relative || '.', reason: 'changed while it was handed back' });
      continue;
    }
    folders.push({ relative: folder.relative, mode: permissionBits(folder.stats, folder.relative, report) });
    names.sort(Buffer.compare);
    for (const raw of names) {
      const entry = await walkedEntry(source, folder.relative, raw);
      if ('reason' in entry) {
        report.leftOut.push(entry);
        continue;
      }
      const { path: relative, stats } = entry;
      if (stats.isDirectory()) {
        await mkdir(path.join(destination, relative), { mode: 0o700 });
        stack.push({ relative, stats });
      } else if (stats.isSymbolicLink()) {
        await handBackLink(source, destination, relative, options.links ?? 'list', report);
      } else if (stats.isFile()) {
        await handBackFile({ source, destination, relative, stats, folder: folder.stats, limits, report });
      } else {
        report.leftOut.push({ path: relative, reason: `${entryKind(stats)}, never opened` });
      }
    }
  }
  // Deepest first, so that a read-only folder never stops the making of what it holds.
  for (const folder of folders.reverse()) {
    await chmod(path.join(destination, folder.relative), folder.mode | 0o700);
  }
  if (options.removeSource) await rm(source, { recursive: true, force: true });
  if (report.leftOut.length > LISTED) {
    const more = report.leftOut.length - LISTED;
    report.leftOut = [
      ...report.leftOut.slice(0, LISTED),
      { path: '…', reason: `and ${more} more entries left out` },
    ];
  }
  return report;
}

async function handBackLink(
  source: string,
  destination: string,
  relative: string,
  mode: 'list' | 'keep',
  report: HandBackReport,
): Promise<void> {
  let target: string;
  try {
    target = await readlink(path.join(source, relative));
  } catch (error) {
    report.leftOut.push({
      path: relative,
      reason: `a symbolic link that could not be read (${errorCode(error)})`,
    });
    return;
  }
  report.links.push({ path: relative, target });
  if (mode === 'keep') await symlink(target, path.join(destination, relative));
}

async function handBackFile(work: {
  source: string;
  destination: string;
  relative: string;
  stats: BigIntStats;
  folder: BigIntStats;
  limits: Required<Pick<HandBackOptions, 'maxFiles' | 'maxFileBytes' | 'maxTotalBytes'>>;
  report: HandBackReport;
}): Promise<void> {
  const { relative, stats, limits, report } = work;
  const size = Number(stats.size);
  if (size > limits.maxFileBytes) {
    report.leftOut.push({
      path: relative,
      reason: `${size} bytes, over the ${limits.maxFileBytes} handed back`,
    });
    return;
  }
  if (report.files >= limits.maxFiles || report.bytes + size > limits.maxTotalBytes) {
    report.leftOut.push({
      path: relative,
      reason: `past the hand-back's limits (${limits.maxFiles} files, ${limits.maxTotalBytes} bytes)`,
    });
    return;
  }
  const from = path.join(work.source, relative);
  let input: FileHandle;
  try {
    input = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    report.leftOut.push({ path: relative, reason: `could not be opened (${errorCode(error)})` });
    return;
  }
  const target = path.join(work.destination, relative);
  try {
    const opened = await input.stat({ bigint: true });
    const folderStill = await sameEntry(path.dirname(from), work.folder);
    if (!opened.isFile() || opened.dev !== stats.dev || opened.ino !== stats.ino || !folderStill) {
      report.leftOut.push({ path: relative, reason: 'changed while it was handed back' });
      return;
    }
    const mode = permissionBits(stats, relative, report);
    const output = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    let copied = 0;
    try {
      const buffer = Buffer.alloc(Math.min(COPY_CHUNK, Math.max(size, 1)));
      // Never more than the size inspected: a file that grows is cut there, and the limits hold.
      while (copied < size) {
        const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, size - copied), copied);
        if (bytesRead === 0) break;
        await output.write(buffer, 0, bytesRead);
        copied += bytesRead;
      }
      await output.chmod(mode | 0o600);
    } finally {
      await output.close();
    }
    report.files++;
    report.bytes += copied;
  } catch (error) {
    await rm(target, { force: true }).catch(() => undefined);
    report.leftOut.push({ path: relative, reason: `could not be copied (${errorCode(error)})` });
  } finally {
    await input.close();
  }
}

/** The entry's permission bits, without set-user-ID, set-group-ID and sticky; a cleared one is listed. */
function permissionBits(stats: BigIntStats, relative: string, report: HandBackReport): number {
  const mode = Number(stats.mode);
  if ((mode & 0o7000) !== 0) report.clearedBits.push(relative || '.');
  return mode & 0o777;
}

async function sameEntry(file: string, expected: BigIntStats): Promise<boolean> {
  try {
    const now = await lstat(file, { bigint: true });
    return (
      now.dev === expected.dev && now.ino === expected.ino && now.isDirectory() === expected.isDirectory()
    );
  } catch {
    return false;
  }
}
