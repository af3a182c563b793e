import { lstat, readdir } from 'node:fs/promises';

import { fileNameText } from '../file-name.js';

export interface WorkspaceEntry {
  /** Relative to the workspace, `/`-separated; the bytes of a name that is not UTF-8 are written `%XX`. */
  path: string;
  kind: 'file' | 'link' | 'other';
  bytes: number;
  /**
   * Every name on the path is UTF-8. Otherwise `path` is only a picture of the name, which opens nothing: the entry
   * is listed but not linked or read.
   */
  nameIsUtf8: boolean;
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
 * entered), stopping at `limit` entries so a workspace of a million files still lists at once. Names are read as
 * bytes: an agent may write any, and one that is not UTF-8, read as text, would name no file at all.
 */
export async function listWorkspace(directory: string, limit = 2000): Promise<WorkspaceListing> {
  const entries: WorkspaceEntry[] = [];
  let truncated = false;
  try {
    await readdir(directory);
  } catch {
    return { entries, truncated, exists: false };
  }
  async function walk(folder: Buffer, relative: string, nameIsUtf8: boolean, depth: number): Promise<void> {
    let names: Buffer[];
    try {
      names = (await readdir(folder, { encoding: 'buffer' })).sort(Buffer.compare);
    } catch {
      return;
    }
    for (const raw of names) {
      if (entries.length >= limit) {
        truncated = true;
        return;
      }
      const name = fileNameText(raw);
      const path = relative === '' ? name.text : `${relative}/${name.text}`;
      const utf8 = nameIsUtf8 && name.utf8;
      const child = Buffer.concat([folder, Buffer.from('/'), raw]);
      const stats = await lstat(child).catch(() => undefined);
      if (stats?.isDirectory()) {
        if (depth < 12) await walk(child, path, utf8, depth + 1);
        else truncated = true;
      } else if (stats?.isSymbolicLink()) entries.push({ path, kind: 'link', bytes: 0, nameIsUtf8: utf8 });
      else {
        const kind = stats?.isFile() ? 'file' : 'other';
        entries.push({ path, kind, bytes: stats?.size ?? 0, nameIsUtf8: utf8 });
      }
    }
  }
  await walk(Buffer.from(directory), '', true, 0);
  return { entries, truncated, exists: true };
}

/** A regular file the viewer can open by its name: linked, read and shown. */
export function isOpenableFile(entry: WorkspaceEntry): boolean {
  return entry.kind === 'file' && entry.nameIsUtf8;
}

/** Why an entry is listed without a link. */
export function whyNotOpened(entry: WorkspaceEntry): string {
  if (entry.kind === 'link') return 'a symbolic link, not followed';
  if (entry.kind === 'other') return 'not a plain file';
  return 'its name is not UTF-8 (bytes shown as %XX): open it from the run directory';
}

/** Text is shown when its first bytes hold no NUL; anything else is offered as a download. */
export function looksLikeText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 8000).includes(0);
}
