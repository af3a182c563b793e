import { stat } from 'node:fs/promises';

import { UserError } from '../../errors.js';
import { exportProxyLog } from '../../proxy/log-export.js';
import { episodeFiles, episodePath } from '../../store/run-paths.js';

export async function logExportAction(source: string, options: { out?: string }): Promise<void> {
  const file = await logFileOf(source);
  const rows = await exportProxyLog(file, options.out);
  if (options.out !== undefined)
    console.error(`mass log export: ${rows} rows of ${file} written to ${options.out}`);
}

/** The log of an episode directory, or the file given. */
async function logFileOf(source: string): Promise<string> {
  const found = await stat(source).catch(() => undefined);
  if (found === undefined)
    throw new UserError(
      `${source} does not exist: give an episode directory or its ${episodeFiles.proxyLog}`,
    );
  if (!found.isDirectory()) return source;
  const file = episodePath(source, 'proxyLog');
  if (!(await stat(file).catch(() => undefined))?.isFile()) {
    throw new UserError(`${source} has no ${episodeFiles.proxyLog}: is it an episode directory?`);
  }
  return file;
}
