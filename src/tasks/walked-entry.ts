import type { BigIntStats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';

import { fileNameText } from '../file-name.js';

/**
 * One name of a folder being walked, as `lstat` sees it (never followed): its stats, or why it cannot be used. Its
 * path is relative to the walk's root, `/`-separated; a name that is not UTF-8 is written with `%XX` escapes and never
 * used to open anything.
 */
export type WalkedEntry = { path: string; stats: BigIntStats } | { path: string; reason: string };

export async function walkedEntry(root: string, parent: string, raw: Buffer): Promise<WalkedEntry> {
  const name = fileNameText(raw);
  const relative = parent === '' ? name.text : `${parent}/${name.text}`;
  if (!name.utf8) return { path: relative, reason: 'its name is not UTF-8' };
  try {
    return { path: relative, stats: await lstat(path.join(root, relative), { bigint: true }) };
  } catch (error) {
    return { path: relative, reason: `could not be read (${errorCode(error)})` };
  }
}

/** What an entry that is neither a folder nor a regular file is, in words. */
export function entryKind(stats: {
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'failed';
}
