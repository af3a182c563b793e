import type { Command } from 'commander';

import { DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_DELAY } from '../../queue/worker-policy.js';
import { lazyAction } from './lazy-action.js';

/** An option given once per value: `--allow-suite a --allow-suite b`. */
const repeatable = (value: string, previous: string[]): string[] => [...previous, value];

export function declareWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'Run episodes for coordinators on other machines: takes episode jobs from Redis and writes each episode into the shared run directory. Only jobs signed with the queue secret are run, and only with the endpoints, keys and suites this command line allows',
    )
    .requiredOption('--redis <url>', 'the Redis the coordinator uses, redis://host:port (no password in it)')
    .requiredOption(
      '--runs <dir>',
      'the shared folder holding the run directories, as this machine mounts it',
    )
    .option(
      '--allow-endpoint <host[:port]>',
      'a model server this worker serves (repeat for more); without a port, any port of the host. Jobs for others are refused',
      repeatable,
      [],
    )
    .option(
      '--api-key-env <VAR>',
      'a variable of this worker holding a model key its episodes may use (repeat for more); default none',
      repeatable,
      [],
    )
    .option(
      '--allow-suite <dir>',
      'a folder of task suites beside this package’s own (repeat for more); task generators run outside the sandbox',
      repeatable,
      [],
    )
    .option(
      '--allow-unsandboxed',
      'run jobs that ask for no sandbox: their agents then act as this worker, with its files, keys and secret',
    )
    .option(
      '--allow-private-destination <entry>',
      'a loopback, private or link-local destination (host, host:port or address) this worker lets episodes reach through their egress proxy (repeat for more); jobs asking for others are refused. Default none',
      repeatable,
      [],
    )
    .option(
      '--secret-file <path>',
      'a file (mode 600) holding the secret the coordinators sign their jobs with (default: MASS_QUEUE_SECRET)',
    )
    .option(
      '--max-attempts <n>',
      'the most attempts a job may ask BullMQ for; a job asking for more is refused',
      String(DEFAULT_MAX_ATTEMPTS),
    )
    .option(
      '--max-delay <duration>',
      'the longest a job may ask to wait before it starts or between its attempts (90s, 30m, 2h); a job asking longer is refused',
      DEFAULT_MAX_DELAY,
    )
    .option('--concurrency <n>', 'episodes at once, per model endpoint', '1')
    .option('--name <name>', 'this worker in `mass queue status` (default: host-pid)')
    .option('--lock-seconds <n>', 'how soon a job of a worker that died is given to another', '30')
    .option('--redis-password-env <VAR>', 'the environment variable holding the Redis password')
    .action(lazyAction(async () => (await import('../commands/worker.js')).workerAction));
}
