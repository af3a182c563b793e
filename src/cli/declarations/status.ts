import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareStatus(program: Command): void {
  program
    .command('status')
    .description(
      "A run's progress from its records alone: each stage's work done of planned, episodes and judge calls in flight, throughput, outages and failures, ETAs",
    )
    .argument('<run-dir>', 'the run directory, e.g. runs/demo')
    .option('--watch', 'show it again every few seconds until Ctrl-C')
    .option('--interval <duration>', 'with --watch, how often (e.g. 5s, 1m)', '5s')
    .option('--window <duration>', 'how far back throughput is measured', '5m')
    .option('--json', 'print the status as JSON (with --watch, one line each time)')
    .action(lazyAction(async () => (await import('../commands/status.js')).statusAction));
}
