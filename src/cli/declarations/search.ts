import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareSearch(program: Command): void {
  program
    .command('search')
    .description(
      'The inner loop: per task, a bare reference run, the task’s own workflow (v0), then optimizer → episode → judge iterations keeping a champion',
    )
    .requiredOption('--config <file>', 'the run configuration (YAML; schema: `mass config schema`)')
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option('--tasks <ids>', 'comma-separated task ids (default: the configuration’s, else every train task)')
    .option('--iterations <n>', 'optimizer iterations after v0 (default: the configuration’s, 11)')
    .option(
      '--generation <label>',
      'the generation playing every role, part of every step and episode id',
      'L0',
    )
    .option(
      '--override-config',
      'continue a run whose frozen configuration differs (e.g. more iterations); the old one is kept beside it',
    )
    .option(
      '--skip-doctor',
      'skip the model server checks before the first episode (the quick ones of `mass doctor`)',
    )
    .option('--json', 'print the results as JSON')
    .action(lazyAction(async () => (await import('../commands/search.js')).searchAction));
}
