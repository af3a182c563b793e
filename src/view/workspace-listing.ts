import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface WorkspaceEntry {
  /** Relative to the workspace, `/`-separated. */
  path: string;
  kind: 'file' | 'link' | 'other';
  bytes: number;
}

export interface WorkspaceListing {
  entries: WorkspaceEntry[];
  /** The walk stopped at `limit` entries: the rest is not listed. */
  truncated: boolean;
  exists: boolean;
}

const imageTypes: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The image type of a file an `<img>` may show; SVG is not one of them: it can hold script, so it is shown as text. */
export function imageTypeOf(path: string): string | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return extension ? imageTypes[extension] : undefined;
}

/**
 * The workspace's files, depth first in name order, without following links (a link is listed as one, never
 * entered), stopping at `limit` entries so a workspace of a million files still lists at once.
 */
export async function listWorkspace(directory: string, limit = 2000): Promise<WorkspaceListing> {
  const entries: WorkspaceEntry[] = [];
  let truncated = false;
  try {
    await readdir(directory);
  } catch {
    return { entries, truncated, exists: false };
  }
  async function walk(relative: string, depth: number): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(join(directory, relative))).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (entries.length >= limit) {
        truncated = true;
        return;
      }
      const path = relative === '' ? name : `${relative}/${name}`;
      const stats = await lstat(join(directory, path));
      if (stats.isDirectory()) {
        if (depth < 12) await walk(path, depth + 1);
        else truncated = true;
      } else if (stats.isSymbolicLink()) entries.push({ path, kind: 'link', bytes: 0 });
      else entries.push({ path, kind: stats.isFile() ? 'file' : 'other', bytes: stats.size });
    }
  }
  await walk('', 0);
  return { entries, truncated, exists: true };
}

/** Text is shown when its first bytes hold no NUL; anything else is offered as a download. */
export function looksLikeText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 8000).includes(0);
}
