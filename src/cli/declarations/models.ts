import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareModels(program: Command): void {
  program
    .command('models')
    .description('List the models an OpenAI-compatible server serves, and check that one answers')
    .requiredOption('--base-url <url>', 'OpenAI-style base URL ending in /v1, e.g. http://127.0.0.1:8000/v1')
    .option('--api-key-env <variable>', 'environment variable holding the API key')
    .option(
      '--check <model>',
      'also send a one-line request to this model and report its answer, usage and latency',
    )
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('../commands/models.js')).modelsAction));
}
