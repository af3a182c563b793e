import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { systemErrorCode } from './system-error-code.js';

/**
 * Writes a file so that a reader (or a process restarted after a crash) sees either the old content or the
 * new content, never a prefix: the data goes to a temporary file in the same directory (a rename is only
 * atomic within one file system), is flushed to disk, renamed over the target, and the directory entry is
 * flushed too so the rename itself survives a power cut. Parent directories are created.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const temporaryPath = temporaryPathFor(path);
  try {
    const handle = await open(temporaryPath, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporaryPath, path);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}

export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const directory = dirname(path);
  mkdirSync(directory, { recursive: true });
  const temporaryPath = temporaryPathFor(path);
  try {
    const descriptor = openSync(temporaryPath, 'wx');
    try {
      writeFileSync(descriptor, data);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporaryPath, path);
  } catch (error) {
    rmSync(temporaryPath, { force: true });
    throw error;
  }
  syncDirectorySync(directory);
}

/** Hidden, and unique per process and call, so concurrent writers of one target never share a temp file. */
export function temporaryPathFor(path: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}`;
  return join(dirname(path), `.${basename(path)}.${suffix}.tmp`);
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync().catch(ignoreUnsupportedDirectorySync);
  } finally {
    await handle.close();
  }
}

function syncDirectorySync(directory: string): void {
  const descriptor = openSync(directory, 'r');
  try {
    fsyncSync(descriptor);
  } catch (error) {
    ignoreUnsupportedDirectorySync(error);
  } finally {
    closeSync(descriptor);
  }
}

// Some file systems (and Windows) refuse fsync on a directory; the rename has still happened.
function ignoreUnsupportedDirectorySync(error: unknown): void {
  const code = systemErrorCode(error);
  if (code === 'EINVAL' || code === 'EPERM' || code === 'EISDIR' || code === 'ENOTSUP') return;
  throw error;
}
