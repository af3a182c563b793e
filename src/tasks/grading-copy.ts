import { constants, type BigIntStats } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { fileNameText } from '../file-name.js';
import { TOOL_FOLDER_NAMES } from './tool-folders.js';
import { entryKind, errorCode, walkedEntry } from './walked-entry.js';

/** An entry of the workspace the grader was not shown, and why. */
export interface LeftOutOfGrading {
  /** Workspace-relative, `/`-separated; bytes of a name that is not UTF-8 written `%XX`. */
  path: string;
  reason: string;
}

export interface GradingCopyLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** Far above what any grader reads (research-12's refuse files over 20 MB), far below a workspace's tool folders. */
export const GRADING_COPY_LIMITS: GradingCopyLimits = {
  maxFiles: 10_000,
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalBytes: 1024 * 1024 * 1024,
};

/** Only so many left-out entries are listed one by one; the rest are counted in a last entry. */
const LISTED_LEFT_OUT = 200;

interface PlannedFile {
  relative: string;
  stats: BigIntStats;
}

interface Walk {
  directories: string[];
  files: PlannedFile[];
  toolFolders: string[];
  leftOut: LeftOutOfGrading[];
  /** How many names of the walked workspace lead to each inode (`dev:ino`) that has more than one name. */
  names: Map<string, number>;
}

/**
 * What a grader is shown of a finished workspace: a copy made of its directories and regular files only.
 *
 * Graders are Python scripts that open workspace paths; they follow symbolic links like any program, so a team could
 * link `results.json` to another episode's results (graded 100) or to any host file. Nothing the grader is given can
 * be a link: links, FIFOs, sockets and devices are left out of the copy (a FIFO would also hang the grader), and so is
 * a file hard-linked to a name outside the workspace (its link count is higher than the names found in the workspace),
 * since its content is another file's. Each is reported with the grade.
 *
 * Cheap for big workspaces: tool and cache folders (`.git`, `.venv`, `node_modules`, `__pycache__` …, never research
 * work, as for the judge's bundle) are not copied, and files are cloned (`COPYFILE_FICLONE`: a reflink on file systems
 * that have them, else an in-kernel copy). The task's deliverables and protected files are copied first; past
 * `maxFiles` files, a file over `maxFileBytes`, or once `maxTotalBytes` are copied, files are left out, reported.
 *
 * The copy is made after the episode, when no process of the team is alive (the sandbox dies with its harness), so
 * nothing swaps a file for a link while it is copied; a file whose identity changed between the walk and its copy is
 * still left out.
 *
 * Copies `workspaceDir` into `destination` (which must not exist) and returns what was left out. `firstPaths`
 * (workspace-relative) are copied before any other file.
 */
export async function copyForGrading(
  workspaceDir: string,
  destination: string,
  firstPaths: readonly string[] = [],
  limits: GradingCopyLimits = GRADING_COPY_LIMITS,
): Promise<LeftOutOfGrading[]> {
  const walk: Walk = { directories: [], files: [], toolFolders: [], leftOut: [], names: new Map() };
  await walkWorkspace(workspaceDir, '', walk);
  if (walk.files.some((file) => linkedElsewhere(file, walk))) {
    for (const folder of walk.toolFolders) await countNames(workspaceDir, folder, walk);
  }

  await mkdir(destination);
  for (const directory of walk.directories)
    await mkdir(path.join(destination, directory), { recursive: true });
  const first = new Set(firstPaths.map((relative) => path.posix.normalize(relative)));
  const ordered = [
    ...walk.files.filter((file) => first.has(file.relative)),
    ...walk.files.filter((file) => !first.has(file.relative)),
  ];
  const leftOut = walk.leftOut;
  let copiedFiles = 0;
  let copiedBytes = 0;
  for (const file of ordered) {
    const size = Number(file.stats.size);
    if (linkedElsewhere(file, walk)) {
      leftOut.push({
        path: file.relative,
        reason: `a hard link with ${file.stats.nlink} names, some outside the workspace: its content is another file's`,
      });
    } else if (size > limits.maxFileBytes) {
      leftOut.push({
        path: file.relative,
        reason: `${size} bytes, over the ${limits.maxFileBytes} copied for grading`,
      });
    } else if (copiedFiles >= limits.maxFiles || copiedBytes + size > limits.maxTotalBytes) {
      leftOut.push({
        path: file.relative,
        reason: `past the grading copy's limits (${limits.maxFiles} files, ${limits.maxTotalBytes} bytes)`,
      });
    } else {
      const problem = await copyOne(workspaceDir, destination, file);
      if (problem === undefined) {
        copiedFiles++;
        copiedBytes += size;
      } else leftOut.push({ path: file.relative, reason: problem });
    }
  }
  if (leftOut.length <= LISTED_LEFT_OUT) return leftOut;
  return [
    ...leftOut.slice(0, LISTED_LEFT_OUT),
    { path: '…', reason: `and ${leftOut.length - LISTED_LEFT_OUT} more entries left out` },
  ];
}

async function walkWorkspace(root: string, relative: string, walk: Walk): Promise<void> {
  let names: Buffer[];
  try {
    names = await readdir(path.join(root, relative), { encoding: 'buffer' });
  } catch (error) {
    walk.leftOut.push({ path: relative || '.', reason: `could not be listed (${errorCode(error)})` });
    return;
  }
  names.sort(Buffer.compare);
  for (const raw of names) {
    const entry = await walkedEntry(root, relative, raw);
    if ('reason' in entry) {
      walk.leftOut.push(entry);
      continue;
    }
    const { path: childPath, stats } = entry;
    if (stats.isDirectory()) {
      if (TOOL_FOLDER_NAMES.has(path.posix.basename(childPath))) {
        walk.toolFolders.push(childPath);
        walk.leftOut.push({ path: childPath, reason: 'a tool or cache folder, not research work' });
      } else {
        walk.directories.push(childPath);
        await walkWorkspace(root, childPath, walk);
      }
    } else if (stats.isFile()) {
      walk.files.push({ relative: childPath, stats });
      countName(stats, walk);
    } else {
      walk.leftOut.push({
        path: childPath,
        reason: `${entryKind(stats)}, never followed or read for grading`,
      });
    }
  }
}

/** Counts the names in a tool folder of the inodes that have several: a hard link inside the workspace is its own. */
async function countNames(root: string, relative: string, walk: Walk): Promise<void> {
  let names: Buffer[];
  try {
    names = await readdir(path.join(root, relative), { encoding: 'buffer' });
  } catch {
    return;
  }
  for (const raw of names) {
    const name = fileNameText(raw);
    if (!name.utf8) continue;
    const childPath = `${relative}/${name.text}`;
    const stats = await lstat(path.join(root, childPath), { bigint: true }).catch(() => undefined);
    if (stats?.isDirectory()) await countNames(root, childPath, walk);
    else if (stats?.isFile()) countName(stats, walk);
  }
}

function countName(stats: BigIntStats, walk: Walk): void {
  if (stats.nlink <= 1n) return;
  const key = `${stats.dev}:${stats.ino}`;
  walk.names.set(key, (walk.names.get(key) ?? 0) + 1);
}

function linkedElsewhere(file: PlannedFile, walk: Walk): boolean {
  if (file.stats.nlink <= 1n) return false;
  return BigInt(walk.names.get(`${file.stats.dev}:${file.stats.ino}`) ?? 0) < file.stats.nlink;
}

/** Clones one planned file; a reason when it was not the file walked any more (then nothing of it is kept). */
async function copyOne(root: string, destination: string, file: PlannedFile): Promise<string | undefined> {
  const source = path.join(root, file.relative);
  const target = path.join(destination, file.relative);
  try {
    await copyFile(source, target, constants.COPYFILE_FICLONE);
    const after = await lstat(source, { bigint: true });
    const same =
      after.isFile() &&
      after.dev === file.stats.dev &&
      after.ino === file.stats.ino &&
      after.size === file.stats.size &&
      after.mtimeNs === file.stats.mtimeNs;
    if (same) return undefined;
    await rm(target, { force: true });
    return 'changed while it was being copied for grading';
  } catch (error) {
    await rm(target, { force: true }).catch(() => undefined);
    return `could not be copied (${errorCode(error)})`;
  }
}
