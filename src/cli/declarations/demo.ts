import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'The whole loop on the built-in toy model: two generations of search, tournament, training data and training, then an evaluation of the generations',
    )
    .option('--out <dir>', 'the run directory', 'runs/demo')
    .option('--json', 'print the summary as JSON')
    .option(
      '--faults <rate>',
      'the toy model answers this share of requests with a fault (503, 429, reset, hang, a stream cut mid-way…), to see the loop ride them out',
    )
    .action(lazyAction(async () => (await import('../commands/demo.js')).demoAction));
}
