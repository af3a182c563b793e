import { randomUUID } from 'node:crypto';
import { lstat, readdir, rename, rm } from 'node:fs/promises';

/**
 * Removes a folder that agent code may have written, however deep. Node's `rm` names every entry by its whole path,
 * so a tree nested past the kernel's PATH_MAX (4,096 bytes; a few lines of shell make one) fails it with
 * ENAMETOOLONG, and whatever then removes an episode's, a rerun's or a trial's folder crashed on it, again on every
 * resume. Here such a tree is first flattened: each folder met past `FLATTEN_AT` bytes is moved up to the top as a
 * sibling of short name, until every path is short enough for `rm`.
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw error;
  }
  await flatten(path);
  await rm(path, { recursive: true, force: true });
}

/** Far below PATH_MAX, with room for one more name of 255 bytes. */
const FLATTEN_AT = 2048;

/** Moves every folder deeper than `FLATTEN_AT` bytes of path to the top of `root`, names kept as bytes. */
async function flatten(root: string): Promise<void> {
  const top = Buffer.from(root);
  const pending: Buffer[] = [top];
  for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
    let names: Buffer[];
    try {
      names = await readdir(folder, { encoding: 'buffer' });
    } catch {
      continue;
    }
    for (const name of names) {
      const child = Buffer.concat([folder, Buffer.from('/'), name]);
      const stats = await lstat(child).catch(() => null);
      if (!stats?.isDirectory()) continue;
      if (child.length <= FLATTEN_AT) {
        pending.push(child);
        continue;
      }
      // A name of its own: nothing the agent made at the top can be in the way.
      const flat = Buffer.concat([top, Buffer.from(`/.mass-flattened-${randomUUID()}`)]);
      await rename(child, flat);
      pending.push(flat);
    }
  }
}
