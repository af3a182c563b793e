import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What an entry costs at least: one block, so that a million empty files (inodes) are not free. */
const MINIMUM_ENTRY_BYTES = 4096;

/**
 * The disk the trees under `roots` take: allocated blocks (a sparse file costs what it holds), at least one 4 KiB
 * block per entry, each inode once (hard links). Symbolic links are not followed, and entries that vanish or cannot
 * be read are skipped: agent code may be writing while this walks. A directory of this process's user that it cannot
 * read (a sandbox running as the caller can `chmod 000` one to hide what it holds) is made readable to its owner
 * again. Asynchronous, so that a large workspace never blocks the proxy and the watchdog that run in this process.
 */
export async function diskUsage(roots: string[]): Promise<number> {
  const seen = new Set<string>();
  let bytes = 0;
  const stack = [...roots];
  for (let path = stack.pop(); path !== undefined; path = stack.pop()) {
    let stat;
    try {
      stat = await lstat(path);
    } catch {
      continue;
    }
    const inode = `${stat.dev}:${stat.ino}`;
    if (seen.has(inode)) continue;
    seen.add(inode);
    bytes += Math.max(stat.blocks * 512, MINIMUM_ENTRY_BYTES);
    if (!stat.isDirectory()) continue;
    for (const name of await entries(path, stat.uid, stat.mode)) stack.push(join(path, name));
  }
  return bytes;
}

async function entries(directory: string, owner: number, mode: number): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES' || owner !== process.getuid?.()) return [];
  }
  try {
    await chmod(directory, (mode & 0o7777) | 0o700);
    return await readdir(directory);
  } catch {
    // Removed meanwhile, or not ours to open after all.
    return [];
  }
}
