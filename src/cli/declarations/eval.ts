import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareEval(program: Command): void {
  program
    .command('eval')
    .description(
      "Measures whether the generations got better: episodes on held-out tasks judged by external judges (in both A/B orders, or one drawn per pair) and graded by the tasks' withheld graders; workflow transfers (evaluation.transfer) likewise",
    )
    .requiredOption('--config <file>', 'the run configuration with its evaluation section')
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option('--generations <names>', 'comma-separated generations to compare (default: every registered one)')
    .option('--tasks <ids>', 'comma-separated task ids (default: the suite’s test split)')
    .option('--rollouts <n>', 'episodes per task, model and condition (default 10)')
    .option(
      '--orders <orders>',
      "both: every pair judged in both A/B orders (the default); random: in one order drawn per pair, judge and seed; official: the official code's draw (seeds 42, 43, 44…, the order from the seed alone)",
    )
    .option(
      '--skip-doctor',
      'skip the model server checks before the first episode (the quick ones of `mass doctor`)',
    )
    .option('--json', 'print summary.json')
    .action(lazyAction(async () => (await import('../commands/eval.js')).evalAction));
}
