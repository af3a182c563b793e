import { basename, dirname, resolve } from 'node:path';

import type { Command } from 'commander';

import { runFoundationDemo } from '../../demo/foundation-demo.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'Run the demo on the built-in toy model: a small team, every model call recorded, in a resumable run',
    )
    .option('--out <dir>', 'the run directory', 'runs/demo')
    .option('--json', 'print the summary as JSON')
    .action(async (options: { out: string; json?: boolean }) => {
      const out = resolve(options.out);
      const summary = await runFoundationDemo({ runsDirectory: dirname(out), name: basename(out) });
      if (options.json) {
        console.log(JSON.stringify({ run: out, ...summary }, null, 2));
        return;
      }
      console.log(`mass demo: toy model, run directory ${out}`);
      console.log(
        `  model calls recorded: ${summary.requests} (${Object.entries(summary.threads)
          .map(([role, count]) => `${count} ${role}`)
          .join(', ')})`,
      );
      for (const [model, tokens] of Object.entries(summary.tokens)) {
        console.log(
          `  tokens for ${model}: ${tokens.prompt} prompt, ${tokens.completion} completion (${tokens.reasoning} reasoning)`,
        );
      }
      console.log(`  trajectories: ${resolve(out, summary.logFile)}`);
      console.log('  run it again: finished steps are skipped; delete the run directory to start over.');
    });
}
