import { stat } from 'node:fs/promises';

import type { Command } from 'commander';

import { UserError } from '../../errors.js';
import { exportProxyLog } from '../../proxy/log-export.js';
import { episodeFiles, episodePath } from '../../store/run-paths.js';

export function registerLog(program: Command): void {
  const log = program.command('log').description("An episode's proxy log (requests.jsonl)");
  log
    .command('export')
    .description(
      'Write the proxy log with every request body whole (schemaVersion 1 rows, as earlier versions of mass wrote), for tools that read request bodies from it',
    )
    .argument(
      '<episode-dir>',
      'an episode directory (its requests.jsonl is read), or a proxy log file itself',
    )
    .option('--out <file>', 'write here (whole, or not at all) instead of to standard output')
    .action(async (source: string, options: { out?: string }) => {
      const file = await logFileOf(source);
      const rows = await exportProxyLog(file, options.out);
      if (options.out !== undefined)
        console.error(`mass log export: ${rows} rows of ${file} written to ${options.out}`);
    });
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
