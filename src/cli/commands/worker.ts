import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import type { Command } from 'commander';

import { UserError } from '../../errors.js';
import { EpisodeWorker } from '../../queue/episode-worker.js';
import { parsePositiveInteger } from '../duration.js';

interface WorkerFlags {
  redis: string;
  runs: string;
  concurrency: string;
  name?: string;
  lockSeconds: string;
  redisPasswordEnv?: string;
}

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'Run episodes for coordinators on other machines: takes episode jobs from Redis and writes each episode into the shared run directory',
    )
    .requiredOption('--redis <url>', 'the Redis the coordinator uses, redis://host:port (no password in it)')
    .requiredOption(
      '--runs <dir>',
      'the shared folder holding the run directories, as this machine mounts it',
    )
    .option('--concurrency <n>', 'episodes at once, per model endpoint', '1')
    .option('--name <name>', 'this worker in `mass queue status` (default: host-pid)')
    .option('--lock-seconds <n>', 'how soon a job of a worker that died is given to another', '30')
    .option('--redis-password-env <VAR>', 'the environment variable holding the Redis password')
    .action(async (flags: WorkerFlags) => {
      const runsDirectory = resolve(flags.runs);
      if (!existsSync(runsDirectory)) {
        throw new UserError(
          `--runs ${flags.runs}: no such folder; mount the shared run folder and name it here`,
        );
      }
      const worker = new EpisodeWorker({
        url: flags.redis,
        passwordEnv: flags.redisPasswordEnv,
        runsDirectory,
        concurrency: parsePositiveInteger(flags.concurrency, '--concurrency'),
        lockSeconds: parsePositiveInteger(flags.lockSeconds, '--lock-seconds'),
        name: flags.name,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      await worker.start();
      process.stderr.write(
        `mass worker ${worker.name}: waiting for episodes (Ctrl-C to stop after the running ones)\n`,
      );
      await new Promise<void>((resolveStop) => {
        const stop = () => {
          void worker.close().then(resolveStop);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
