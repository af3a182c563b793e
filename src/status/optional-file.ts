import { readdir, readFile } from 'node:fs/promises';

import { systemErrorCode } from '../store/system-error-code.js';

/** A file's text, or undefined when it is not there (a run's records come and go as stages write them). */
export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The names of a folder's subfolders (or, with `files`, its files), sorted; none when the folder is not there. Hidden
 * names are left out unless `hidden` (the queue workers' `.staging` is one).
 */
export async function entryNames(
  path: string,
  options: { files?: boolean; hidden?: boolean } = {},
): Promise<string[]> {
  try {
    const found = await readdir(path, { withFileTypes: true });
    return found
      .filter((entry) => (options.files ? entry.isFile() : entry.isDirectory()))
      .filter((entry) => options.hidden === true || !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}
