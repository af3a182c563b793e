import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareRsi(program: Command): void {
  program
    .command('rsi')
    .description(
      'The whole loop, generation after generation: search → collect → rank → select → build data → train → deploy',
    )
    .requiredOption('--config <file>', 'the run configuration (YAML; schema: `mass config schema`)')
    .option('--rounds <r>', 'generations to train (L0 plays first; the run ends with L<r>)', '1')
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option(
      '--override-config',
      'continue a run whose frozen configuration differs; the old one is kept beside it',
    )
    .option(
      '--skip-doctor',
      'skip the model server checks before the first episode (the quick ones of `mass doctor`)',
    )
    .option('--json', 'print the summary as JSON')
    .action(lazyAction(async () => (await import('../commands/rsi.js')).rsiAction));
}
