import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareReport(program: Command): void {
  program
    .command('report')
    .description(
      'One self-contained HTML file showing a run: configuration, searches, tournaments, training data, evaluation',
    )
    .argument('<run-dir>', 'the run directory (e.g. runs/demo)')
    .option('--out <file>', 'where to write it (default: <run-dir>/report.html)')
    .action(lazyAction(async () => (await import('../commands/report.js')).reportAction));
}
