import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareCompare(program: Command): void {
  program
    .command('compare')
    .description(
      "Puts several runs' workflow searches side by side (the paper's Figures 4 and 7): per run and generation, how soon each task's search found a winning design, by the loop's own judge and by an evaluation's external judges",
    )
    .argument('<run-dir...>', 'run directories (e.g. runs/qwen3-search runs/strong-judge)')
    .option('--out <file>', 'also write the comparison as one self-contained HTML page, with the charts')
    .option('--json', 'print the comparison as JSON')
    .action(lazyAction(async () => (await import('../commands/compare.js')).compareAction));
}
