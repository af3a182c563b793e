import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import type { LoadedTask } from './load-task.js';

export interface ProtectedAssetDigest {
  /** Workspace-relative path. */
  path: string;
  sha256: string;
}

export type ProtectedAssetStatus = 'unchanged' | 'modified' | 'missing';

export interface ProtectedAssetFinding extends ProtectedAssetDigest {
  status: ProtectedAssetStatus;
  /** Digest found in the workspace; absent when the file is missing. */
  actualSha256?: string;
}

export async function sha256File(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** The digests a workspace's protected assets must keep: those of the task's own source files. */
export async function expectedProtectedDigests(task: LoadedTask): Promise<ProtectedAssetDigest[]> {
  const digests: ProtectedAssetDigest[] = [];
  for (const protectedPath of task.manifest.protected) {
    const source = task.manifest.inputs.files.find((file) => file.to === protectedPath);
    if (!source) continue; // the manifest schema guarantees a source; kept total for callers with hand-built tasks
    digests.push({ path: protectedPath, sha256: await sha256File(path.join(task.dir, source.from)) });
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
      actualSha256 = await sha256File(path.join(workspaceDir, expected.path));
    } catch {
      actualSha256 = undefined;
    }
    const status: ProtectedAssetStatus =
      actualSha256 === undefined ? 'missing' : actualSha256 === expected.sha256 ? 'unchanged' : 'modified';
    findings.push({ ...expected, status, ...(actualSha256 ? { actualSha256 } : {}) });
  }
  return findings;
}
