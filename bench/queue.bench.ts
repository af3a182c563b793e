import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';

import { QueueEpisodeBackend } from '../src/queue/queue-backend.js';
import { QueueSecret } from '../src/queue/queue-secret.js';
import { PrivateRedis } from '../src/testing/redis-server.js';
import { startScriptedServer } from '../src/testing/scripted-server.js';
import { scriptedTeam } from '../src/testing/scripted-team.js';
import { step, type Step } from '../src/toy/steps.js';

/**
 * Scale-out through the episode queue, side by side in one run: 32 episodes (one orchestrator, two model calls of
 * 2 s each) given to one `mass worker` process, then to three, each running the same number at once. Also what the
 * queue costs per episode: Redis commands and memory, and the coordinator's processor time (this process, which also
 * serves the scripted model: an upper bound).
 */
const EPISODES = 32;
const CALL_MS = 2000;
const PER_WORKER = 4;
const taskDir = fileURLToPath(new URL('../test/fixtures/tasks/tiny-sum', import.meta.url));
const massCli = fileURLToPath(new URL('../test/support/mass-cli.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url));
/** The secret the benchmark's coordinator signs its jobs with, given to its workers in their environment. */
const QUEUE_SECRET = randomBytes(32).toString('hex');

export async function benchQueue(): Promise<Record<string, unknown>> {
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-queue-'));
  const runs = join(directory, 'runs');
  const redis = await PrivateRedis.start(directory);
  const slow = (made: Step): Step => ({ ...made, delayMs: CALL_MS }) as Step;
  const server = await startScriptedServer({
    responder: scriptedTeam({
      orchestrator: [slow(step.toolCall('run_shell_command', { command: 'true' })), slow(step.text('done'))],
    }).responder,
  });
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  try {
    const figures: Record<string, Record<string, number>> = {};
    for (const workers of [1, 3]) {
      figures[`${workers}-worker${workers > 1 ? 's' : ''}`] = await measure(
        workers,
        runs,
        redis.url,
        server.baseUrl,
      );
    }
    const one = figures['1-worker']!;
    const three = figures['3-workers']!;
    return {
      episodes: EPISODES,
      modelCallMs: CALL_MS,
      episodesAtOncePerWorker: PER_WORKER,
      ...figures,
      throughputThreeWorkersOverOne: Number((three.episodesPerMinute! / one.episodesPerMinute!).toFixed(2)),
      loadAverage: { start: loadAtStart, end: Number(loadavg()[0]!.toFixed(2)) },
      note: 'workers are processes on this machine: they share its cores, so the ratio is bounded by the harness’s processor time, not by the queue',
    };
  } finally {
    await server.close();
    await redis.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function measure(
  workerCount: number,
  runs: string,
  redisUrl: string,
  baseUrl: string,
): Promise<Record<string, number>> {
  const runDirectory = join(runs, `bench-${workerCount}`);
  mkdirSync(join(runDirectory, 'episodes'), { recursive: true });
  const admin = new Redis(redisUrl);
  const backend = new QueueEpisodeBackend({
    url: redisUrl,
    runDirectory,
    episodesPerEndpoint: workerCount * PER_WORKER,
    pollMs: 1000,
    secret: new QueueSecret(QUEUE_SECRET),
  });
  const workers: ChildProcess[] = [];
  try {
    // The endpoint's queue exists before the workers start, so they find it at once; then the clock starts.
    const commandsBefore = await totalCommands(admin);
    const memoryBefore = await usedMemory(admin);
    for (let index = 0; index < workerCount; index++)
      workers.push(startWorker(`bench-${workerCount}-${index}`, runs, redisUrl, new URL(baseUrl).host));
    await Promise.all(workers.map(ready));
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: EPISODES }, (_, index) =>
        backend.run({
          stepKey: `bench/${index}/episode`,
          options: {
            taskDir,
            model: 'm',
            baseUrl,
            seed: index,
            outDir: join(runDirectory, 'episodes', `e${index}`),
          },
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const failed = results.filter((result) => result.record.status !== 'success');
    if (failed.length > 0) throw new Error(`benchmark episode failed: ${failed[0]!.record.failure?.detail}`);
    const commands = (await totalCommands(admin)) - commandsBefore;
    return {
      seconds: Number(seconds.toFixed(1)),
      episodesPerMinute: Number(((EPISODES / seconds) * 60).toFixed(2)),
      redisCommandsPerEpisode: Math.round(commands / EPISODES),
      redisBytesPerFinishedJob: Math.round(((await usedMemory(admin)) - memoryBefore) / EPISODES),
      coordinatorCpuMsPerEpisode: Math.round((cpu.user + cpu.system) / 1000 / EPISODES),
    };
  } finally {
    for (const worker of workers) worker.kill('SIGTERM');
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve))));
    await backend.close();
    admin.disconnect();
  }
}

/** Resolves once the worker says it waits for episodes (it finds new queues within 2 s after). */
function ready(worker: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    worker.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('waiting for episodes')) resolve();
    });
    worker.once('exit', (code) => reject(new Error(`mass worker exited (${code}): ${seen}`)));
  });
}

function startWorker(name: string, runs: string, redisUrl: string, endpoint: string): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--import',
      tsx,
      massCli,
      'worker',
      '--redis',
      redisUrl,
      '--runs',
      runs,
      '--name',
      name,
      '--concurrency',
      String(PER_WORKER),
      '--allow-endpoint',
      endpoint,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MASS_QUEUE_SECRET: QUEUE_SECRET } },
  );
}

async function totalCommands(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))![1]);
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
}
