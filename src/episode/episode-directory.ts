import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { UserError } from '../errors.js';
import { episodeFiles } from '../store/run-paths.js';
import { removeTree } from '../store/remove-tree.js';

/**
 * Written first into every episode directory, before anything else: a directory holding it is an episode's, finished
 * or not, and may be cleaned and run again. No other folder is ever deleted to make room for an episode.
 */
export const EPISODE_MARKER = '.mass-episode';

/**
 * What an episode writes into its directory. A directory from before the marker holding only these (and one of
 * those only an episode writes) is a half-finished episode too.
 */
const EPISODE_ENTRIES = new Set<string>(Object.values(episodeFiles));
const ONLY_EPISODES_WRITE: readonly string[] = [
  episodeFiles.proxyLog,
  episodeFiles.harnessEvents,
  episodeFiles.harnessStderr,
  episodeFiles.sandbox,
  episodeFiles.prompt,
];
/** `writeFileAtomic`'s temporary files of `episode.json`. */
const RECORD_TEMPORARY = /^\.episode\.json\..+\.tmp$/;

/** What is in `directory`: nothing (missing or empty), an episode's files, or something else. */
export async function episodeDirectoryState(directory: string): Promise<'empty' | 'episode' | 'other'> {
  let entries: string[];
  try {
    const stat = await lstat(directory);
    if (!stat.isDirectory()) return 'other';
    entries = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'empty';
    throw error;
  }
  if (entries.length === 0) return 'empty';
  if (entries.includes(EPISODE_MARKER)) return 'episode';
  const ours = entries.every((entry) => EPISODE_ENTRIES.has(entry) || RECORD_TEMPORARY.test(entry));
  return ours && entries.some((entry) => ONLY_EPISODES_WRITE.includes(entry)) ? 'episode' : 'other';
}

/** Refuses a directory an episode must not run in: one that exists and holds anything but an episode. */
export async function assertEpisodeDirectory(directory: string): Promise<void> {
  if ((await episodeDirectoryState(directory)) !== 'other') return;
  let listing = '';
  try {
    const entries = (await readdir(directory)).sort();
    listing = ` (it holds ${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', …' : ''})`;
  } catch {
    listing = ' (it is not a directory)';
  }
  throw new UserError(
    `${directory} is not an episode directory${listing}: an episode would delete what is there to run in it. ` +
      'Give a new or empty directory, or the directory of an episode to finish or redo.',
  );
}

/**
 * Makes `directory` ready for a fresh run: created, or emptied when it holds a half-finished episode, and marked as
 * an episode's. Anything else in it is refused, never deleted.
 */
export async function prepareEpisodeDirectory(
  directory: string,
  log?: (message: string) => void,
): Promise<void> {
  await assertEpisodeDirectory(directory);
  if ((await episodeDirectoryState(directory)) === 'episode') {
    log?.('cleaning a half-finished run');
    await removeTree(directory);
  }
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, EPISODE_MARKER), 'mass episode directory\n');
}
