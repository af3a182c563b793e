import { basename, dirname, resolve } from 'node:path';

import type { Command } from 'commander';

import { RunConfig } from '../../config/run-config.js';
import { UserError } from '../../errors.js';
import { ConfigMismatchError } from '../../store/frozen-config.js';
import { DEMO_SUITE, demoConfig } from '../../demo/demo-config.js';
import { openRun } from '../../store/run-store.js';
import { loadToyWeights, TOY_BEHAVIOURS } from '../../testing/toy-model/weights.js';
import { ModelRegistry } from '../../train/registry.js';
import { describeRsi, runRsi } from './rsi.js';

const DEMO_ROUNDS = 2;

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'The whole loop on the built-in toy model: two generations of search, tournament, training data and training',
    )
    .option('--out <dir>', 'the run directory', 'runs/demo')
    .option('--json', 'print the summary as JSON')
    .action(async (options: { out: string; json?: boolean }) => {
      const out = resolve(options.out);
      let run;
      try {
        run = openRun({
          runsDirectory: dirname(out),
          name: basename(out),
          configSchema: RunConfig,
          config: demoConfig(basename(out)),
          command: 'mass demo',
        });
      } catch (error) {
        if (!(error instanceof ConfigMismatchError)) throw error;
        throw new UserError(
          `${out} holds a run of another version of the demo (it differs in ${error.differences
            .map((difference) => difference.field)
            .join(', ')}): delete that folder, or give --out another one.`,
        );
      }
      const summary = await runRsi(run, DEMO_SUITE, DEMO_ROUNDS, 'mass demo');
      const registry = await ModelRegistry.open(out);
      const weights = await Promise.all(
        registry.list().map(async (generation) => ({
          generation: generation.name,
          weights: await loadToyWeights(generation.mergedPath!),
        })),
      );
      if (options.json) {
        console.log(JSON.stringify({ directory: out, ...summary, toyWeights: weights }, null, 2));
        return;
      }
      console.log(
        'mass demo: the toy model (rule-based, no GPU; everything it writes is marked "toy output")',
      );
      console.log(describeRsi(summary, out));
      console.log('The toy model’s behaviour, generation by generation (what toy training changed):');
      console.log(
        `  ${'behaviour'.padEnd(22)}${weights.map((entry) => entry.generation.padStart(8)).join('')}`,
      );
      for (const behaviour of TOY_BEHAVIOURS) {
        const values = weights.map((entry) => entry.weights[behaviour].toFixed(3).padStart(8)).join('');
        console.log(`  ${behaviour.padEnd(22)}${values}`);
      }
      console.log('Run it again: finished steps are skipped. Delete the run directory to start over.');
    });
}
