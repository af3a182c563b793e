import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What an entry costs at least: one block, so that a million empty files (inodes) are not free. */
const MINIMUM_ENTRY_BYTES = 4096;

/**
 * The disk the trees under `roots` take: allocated blocks (a sparse file costs what it holds), at least one 4 KiB
 * block per entry, each inode once (hard links). Symbolic links are not followed, and entries that vanish or cannot
 * be read are skipped: agent code may be writing while this walks. Nothing is ever changed on the way: agent code
 * can swap a folder for a link between two calls, so a `chmod` here could land on any file of the host. A folder a
 * sandbox running as the caller made unreadable (`chmod 000`) is therefore not measured (as root, every folder reads);
 * RLIMIT_FSIZE still bounds each file in it. Asynchronous, so that a large workspace never blocks the proxy and the
 * watchdog that run in this process.
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
    for (const name of await entries(path)) stack.push(join(path, name));
  }
  return bytes;
}

async function entries(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch {
    // Removed meanwhile, or not readable.
    return [];
  }
}
