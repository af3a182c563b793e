import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The names in `folder` that `keep` accepts (every one by default), sorted; none when the folder is not there, as a
 * run's records are read wherever a stage has not written yet.
 */
export async function namesIn(
  folder: string,
  keep: (entry: { name: string; isDirectory(): boolean; isFile(): boolean }) => boolean = () => true,
): Promise<string[]> {
  try {
    const found = await readdir(folder, { withFileTypes: true });
    return found
      .filter(keep)
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

/** The sub-folders of `folder`, by name. */
export function folderNames(folder: string): Promise<string[]> {
  return namesIn(folder, (entry) => entry.isDirectory());
}

/** The sub-folders of `folder`, as paths. */
export async function folderPaths(folder: string): Promise<string[]> {
  return (await folderNames(folder)).map((name) => join(folder, name));
}

/** The `.json` files of `folder`, as paths. */
export async function jsonFilePaths(folder: string): Promise<string[]> {
  const names = await namesIn(folder, (entry) => entry.isFile() && entry.name.endsWith('.json'));
  return names.map((name) => join(folder, name));
}
