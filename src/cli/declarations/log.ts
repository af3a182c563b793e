import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareLog(program: Command): void {
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
    .action(lazyAction(async () => (await import('../commands/log.js')).logExportAction));
}
