import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareView(program: Command): void {
  program
    .command('view')
    .description(
      'Browse a run directory in a local web viewer: run, generations, tasks, episodes, comparisons, searches',
    )
    .argument('<run-dir>', 'the run directory, e.g. runs/demo')
    .option('--port <n>', 'the port on 127.0.0.1 (0: any free port)', '8765')
    .action(lazyAction(async () => (await import('../commands/view.js')).viewAction));
}
