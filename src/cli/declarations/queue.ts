import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareQueue(program: Command): void {
  const queue = program.command('queue').description('The episode queue of `execution: { backend: queue }`');
  queue
    .command('status')
    .description('Jobs waiting, active, completed and failed, per model endpoint and per worker')
    .requiredOption('--redis <url>', 'redis://host:port (no password in it)')
    .option('--redis-password-env <VAR>', 'the environment variable holding the Redis password')
    .option('--json', 'print the status as JSON')
    .action(lazyAction(async () => (await import('../commands/queue.js')).queueStatusAction));
}
