import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';

import { TOOL_FOLDER_NAMES } from '../tasks/tool-folders.js';
import type { FileText } from './excerpt.js';
import { byCodeUnits } from './format.js';

/**
 * The workspace as the bundle sees it. Nothing is followed through a symbolic link: the bundle is built outside the
 * sandbox, and a link planted by the team could otherwise show the judge any file on the host (the task's withheld
 * answers included).
 */
export interface WorkspaceEntry {
  /** Workspace-relative, with forward slashes. */
  path: string;
  size: number;
  type: 'file' | 'symlink' | 'other';
}

export interface WorkspaceListing {
  /** Files, links and other entries outside skipped folders, in code-unit order of path. */
  entries: WorkspaceEntry[];
  /** Caches and tool folders that are counted, not listed. */
  skippedFolders: Array<{ path: string; files: number }>;
  /** The walk stopped early at `maxEntries`; counts are then lower bounds. */
  walkLimitReached: boolean;
  totalBytes: number;
}

export async function listWorkspace(root: string, maxEntries = 50_000): Promise<WorkspaceListing> {
  const listing: WorkspaceListing = {
    entries: [],
    skippedFolders: [],
    walkLimitReached: false,
    totalBytes: 0,
  };
  let seen = 0;

  async function walk(relative: string, skipped: { files: number } | undefined): Promise<void> {
    let children;
    try {
      children = await readdir(path.join(root, relative), { withFileTypes: true });
    } catch {
      return; // unreadable folder: what it holds cannot be evidence either way
    }
    children.sort((left, right) => byCodeUnits(left.name, right.name));
    for (const child of children) {
      if (seen >= maxEntries) {
        listing.walkLimitReached = true;
        return;
      }
      seen++;
      const childPath = relative === '' ? child.name : `${relative}/${child.name}`;
      if (child.isDirectory()) {
        if (skipped) await walk(childPath, skipped);
        else if (TOOL_FOLDER_NAMES.has(child.name)) {
          const folder = { path: childPath, files: 0 };
          listing.skippedFolders.push(folder);
          await walk(childPath, folder);
        } else await walk(childPath, undefined);
        continue;
      }
      if (skipped) {
        skipped.files++;
        continue;
      }
      const type = child.isFile() ? 'file' : child.isSymbolicLink() ? 'symlink' : 'other';
      let size = 0;
      if (type === 'file') {
        try {
          size = (await lstat(path.join(root, childPath))).size;
        } catch {
          size = 0;
        }
      }
      listing.totalBytes += size;
      listing.entries.push({ path: childPath, size, type });
    }
  }

  await walk('', undefined);
  listing.entries.sort((left, right) => byCodeUnits(left.path, right.path));
  return listing;
}

export type ReadResult =
  | { kind: 'text'; file: FileText; bytes: number }
  | { kind: 'binary'; bytes: number }
  | { kind: 'unreadable'; reason: string };

/** Reads a listed regular file as UTF-8 text: whole up to `maxWholeBytes`, otherwise its two ends. */
export async function readWorkspaceText(
  root: string,
  relativePath: string,
  options: { maxWholeBytes: number; endBytes: number },
): Promise<ReadResult> {
  const file = path.join(root, relativePath);
  let handle;
  try {
    const stats = await lstat(file);
    if (!stats.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    handle = await open(file, 'r');
    const size = stats.size;
    if (size <= options.maxWholeBytes) {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, 0);
      const content = buffer.subarray(0, bytesRead);
      if (looksBinary(content)) return { kind: 'binary', bytes: size };
      return { kind: 'text', file: { kind: 'whole', text: content.toString('utf8') }, bytes: size };
    }
    const endBytes = Math.min(options.endBytes, Math.floor(size / 2));
    const head = Buffer.alloc(endBytes);
    const tail = Buffer.alloc(endBytes);
    await handle.read(head, 0, endBytes, 0);
    await handle.read(tail, 0, endBytes, size - endBytes);
    if (looksBinary(head)) return { kind: 'binary', bytes: size };
    return {
      kind: 'text',
      file: {
        kind: 'ends',
        head: head.toString('utf8').replace(/\uFFFD+$/u, ''),
        tail: tail.toString('utf8').replace(/^\uFFFD+/u, ''),
        totalBytes: size,
      },
      bytes: size,
    };
  } catch (error) {
    return { kind: 'unreadable', reason: (error as NodeJS.ErrnoException).code ?? 'read failed' };
  } finally {
    await handle?.close();
  }
}

/** Reads the first bytes of a listed regular file (for signatures such as PNG's). */
export async function readWorkspaceBytes(
  root: string,
  relativePath: string,
  start: number,
  length: number,
): Promise<Buffer | undefined> {
  let handle;
  try {
    const file = path.join(root, relativePath);
    if (!(await lstat(file)).isFile()) return undefined;
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, Math.max(0, start));
    return buffer.subarray(0, bytesRead);
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** NUL bytes, or a sample that is not UTF-8: a binary file, shown by name and size only. */
function looksBinary(content: Buffer): boolean {
  const sample = content.subarray(0, 8192);
  if (sample.includes(0)) return true;
  try {
    // A sample cut mid-character is still text: drop up to three trailing bytes of a partial sequence.
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, trimPartialCharacter(sample)));
    return false;
  } catch {
    return true;
  }
}

function trimPartialCharacter(sample: Buffer): number {
  let end = sample.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = sample[end - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    if (byte >= 0xc0) {
      const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      if (back < needed) end -= back;
    }
    break;
  }
  return end;
}
