import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareDistill(program: Command): void {
  program
    .command('distill')
    .description(
      'The outer loop’s data after `mass search`: each winning champion run many times, a tournament, Bradley–Terry, selection, training data',
    )
    .requiredOption('--config <file>', 'the configuration the search ran with')
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option(
      '--generation <label>',
      'the generation whose search results are used and whose model plays',
      'L0',
    )
    .option('--json', 'print the result as JSON')
    .action(lazyAction(async () => (await import('../commands/distill.js')).distillAction));
}
