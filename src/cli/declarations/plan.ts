import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declarePlan(program: Command): void {
  program
    .command('plan')
    .description(
      'What a configuration will do before anything runs: episodes, judge and optimizer calls per stage, tokens per role, wall time, training steps, disk and cost, each figure with what it rests on',
    )
    .requiredOption('--config <file>', 'the run configuration (YAML; schema: `mass config schema`)')
    .option('--rounds <r>', 'generations the loop trains, as `mass rsi --rounds`', '1')
    .option(
      '--like <run>',
      "a finished run's directory: tokens, seconds and bytes per episode and per call as measured there",
    )
    .option(
      '--throughput <tokens-per-second>',
      "output tokens per second at the configured concurrency, as `mass doctor` measured them (its throughput line's second figure); wins over the doctor's record",
    )
    .option(
      '--doctor-record <file>',
      'the throughput record `mass doctor` wrote (default <runs>/<name>/doctor-throughput.json, read when it is there)',
    )
    .option(
      '--runs <dir>',
      'the folder holding run directories, where the doctor record is looked for',
      'runs',
    )
    .option(
      '--winning <counts>',
      'per round, how many searches beat their reference (e.g. 2,1): only those tasks are collected and ranked; default every task, the most',
    )
    .option('--only <scope>', 'loop: what `mass rsi` runs; evaluation: what `mass eval` runs; default both')
    .option('--json', 'print the plan as JSON')
    .action(lazyAction(async () => (await import('../commands/plan.js')).planAction));
}
