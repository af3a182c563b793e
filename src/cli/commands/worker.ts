import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import type { Command } from 'commander';

import { UserError } from '../../errors.js';
import { EpisodeWorker } from '../../queue/episode-worker.js';
import { readQueueSecret } from '../../queue/queue-secret.js';
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_DELAY,
  describeEndpoint,
  parseAllowedEndpoint,
  type WorkerPolicy,
} from '../../queue/worker-policy.js';
import { parseDurationSeconds, parsePositiveInteger } from '../duration.js';

interface WorkerFlags {
  redis: string;
  runs: string;
  concurrency: string;
  name?: string;
  lockSeconds: string;
  redisPasswordEnv?: string;
  secretFile?: string;
  allowEndpoint: string[];
  apiKeyEnv: string[];
  allowSuite: string[];
  allowUnsandboxed?: boolean;
  allowPrivateDestination: string[];
  maxAttempts: string;
  maxDelay: string;
}

const repeatable = (value: string, previous: string[]): string[] => [...previous, value];

export function registerWorker(program: Command): void {
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
    .action(async (flags: WorkerFlags) => {
      const runsDirectory = resolve(flags.runs);
      if (!existsSync(runsDirectory)) {
        throw new UserError(
          `--runs ${flags.runs}: no such folder; mount the shared run folder and name it here`,
        );
      }
      const secretFile = flags.secretFile === undefined ? undefined : resolve(flags.secretFile);
      const secret = readQueueSecret({ file: secretFile, fileSetting: '--secret-file' });
      const policy = workerPolicy(flags);
      const worker = new EpisodeWorker({
        url: flags.redis,
        passwordEnv: flags.redisPasswordEnv,
        runsDirectory,
        concurrency: parsePositiveInteger(flags.concurrency, '--concurrency'),
        lockSeconds: parseDurationSeconds(flags.lockSeconds, '--lock-seconds'),
        name: flags.name,
        secret,
        policy,
        hiddenPaths: secretFile === undefined ? [] : [secretFile],
        log: (line) => process.stderr.write(`${line}\n`),
      });
      await worker.start();
      process.stderr.write(
        `mass worker ${worker.name}: serving ${policy.endpoints.map(describeEndpoint).join(', ')}; keys: ${policy.apiKeyVariables.join(', ') || 'none'}; ${policy.allowUnsandboxed ? 'unsandboxed episodes allowed' : 'sandboxed episodes only'}\n`,
      );
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

/** What the command line allows, checked now: a worker that could run nothing, or lacks a key it offers, says so. */
function workerPolicy(flags: WorkerFlags): WorkerPolicy {
  if (flags.allowEndpoint.length === 0) {
    throw new UserError(
      'mass worker serves no model endpoint: name each server its episodes may call with --allow-endpoint host:port (e.g. --allow-endpoint gpu-1:8000)',
    );
  }
  const endpoints = flags.allowEndpoint.map((text) => parseAllowedEndpoint(text));
  for (const variable of flags.apiKeyEnv) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      throw new UserError(`--api-key-env ${variable}: name the environment variable holding the key`);
    }
    if (!process.env[variable]) {
      throw new UserError(
        `--api-key-env ${variable}: ${variable} is not set in this worker's environment; export it, or drop the flag`,
      );
    }
  }
  const suites = flags.allowSuite.map((folder) => {
    const path = resolve(folder);
    if (!existsSync(path) || !statSync(path).isDirectory()) {
      throw new UserError(`--allow-suite ${folder}: no such folder on this machine`);
    }
    return path;
  });
  const maxAttempts = parsePositiveInteger(flags.maxAttempts, '--max-attempts');
  if (maxAttempts < 1) throw new UserError('--max-attempts must be at least 1');
  return {
    allowUnsandboxed: flags.allowUnsandboxed === true,
    apiKeyVariables: flags.apiKeyEnv,
    endpoints,
    suites,
    maxAttempts,
    maxDelayMs: parseDurationSeconds(flags.maxDelay, '--max-delay') * 1000,
    privateDestinations: flags.allowPrivateDestination,
  };
}
