import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import path from 'node:path';

import type { LoadedTask } from './load-task.js';

export interface ProtectedAssetDigest {
  /** Workspace-relative path. */
  path: string;
  sha256: string;
}

/** `missing`: not in the workspace as a regular file (absent, a link, a FIFO, a folder, unreadable). */
export type ProtectedAssetStatus = 'unchanged' | 'modified' | 'missing';

export interface ProtectedAssetFinding extends ProtectedAssetDigest {
  status: ProtectedAssetStatus;
  /** Digest found in the workspace; absent when the file is missing. */
  actualSha256?: string;
}

/**
 * The SHA-256 of a regular file, read in pieces. It is also taken of workspace files a team could have replaced, so a
 * link is never followed (a link to the original elsewhere would hash as unchanged) and anything but a regular file is
 * refused (a FIFO or `/dev/zero` would never end), as is a file that grows past `maxBytes` while it is read.
 */
export async function sha256File(file: string, maxBytes = 16 * 1024 ** 3): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${file} is not a regular file`);
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(1024 * 1024);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new Error(`${file} is larger than ${maxBytes} bytes`);
      hash.update(buffer.subarray(0, bytesRead));
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/**
 * The SHA-256 of a workspace file, reached through real folders only: `O_NOFOLLOW` covers the last part of a path,
 * so a folder on the way replaced by a link (to a copy of the untouched original, say) is refused here.
 */
export async function sha256WorkspaceFile(workspaceDir: string, relativePath: string): Promise<string> {
  const parts = relativePath.split(/[\\/]/).filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new Error(`${relativePath} leaves the workspace`);
  let folder = workspaceDir;
  for (const part of parts.slice(0, -1)) {
    folder = path.join(folder, part);
    if (!(await lstat(folder)).isDirectory()) throw new Error(`${folder} is not a folder (a link?)`);
  }
  return sha256File(path.join(workspaceDir, ...parts));
}

/** The digests a workspace's protected assets must keep: those of the task's own source files. */
export async function expectedProtectedDigests(task: LoadedTask): Promise<ProtectedAssetDigest[]> {
  const digests: ProtectedAssetDigest[] = [];
  for (const protectedPath of task.manifest.protected) {
    const source = task.manifest.inputs.files.find((file) => file.to === protectedPath);
    if (!source) continue; // the manifest schema guarantees a source; kept total for callers with hand-built tasks
    // The task's own folder is trusted: its links are followed, as when the workspace was materialised.
    const original = await realpath(path.join(task.dir, source.from));
    digests.push({ path: protectedPath, sha256: await sha256File(original) });
  }
  return digests;
}

/** Compares every protected asset in a workspace with the task's original: unchanged, modified or missing. */
export async function checkProtectedAssets(
  task: LoadedTask,
  workspaceDir: string,
): Promise<ProtectedAssetFinding[]> {
  const findings: ProtectedAssetFinding[] = [];
  for (const expected of await expectedProtectedDigests(task)) {
    let actualSha256: string | undefined;
    try {
      actualSha256 = await sha256WorkspaceFile(workspaceDir, expected.path);
    } catch {
      actualSha256 = undefined;
    }
    const status: ProtectedAssetStatus =
      actualSha256 === undefined ? 'missing' : actualSha256 === expected.sha256 ? 'unchanged' : 'modified';
    findings.push({ ...expected, status, ...(actualSha256 ? { actualSha256 } : {}) });
  }
  return findings;
}
