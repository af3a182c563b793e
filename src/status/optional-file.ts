import { readFile } from 'node:fs/promises';

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
