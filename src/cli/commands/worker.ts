import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { UserError } from '../../errors.js';
import { EpisodeWorker } from '../../queue/episode-worker.js';
import { readQueueSecret } from '../../queue/queue-secret.js';
import { describeEndpoint, parseAllowedEndpoint, type WorkerPolicy } from '../../queue/worker-policy.js';
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

export async function workerAction(flags: WorkerFlags): Promise<void> {
  const runsDirectory = resolve(flags.runs);
  if (!existsSync(runsDirectory)) {
    throw new UserError(`--runs ${flags.runs}: no such folder; mount the shared run folder and name it here`);
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
