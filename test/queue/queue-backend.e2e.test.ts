import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { collectChampionRuns } from '../../src/distill/collect.js';
import { EpisodeWorker } from '../../src/queue/episode-worker.js';
import { IssuedJob } from '../../src/queue/issued-jobs.js';
import { QUEUE_PREFIX, endpointQueueName, episodeJobId } from '../../src/queue/job-identity.js';
import { QueueEpisodeBackend } from '../../src/queue/queue-backend.js';
import { QueueSecret } from '../../src/queue/queue-secret.js';
import { connectRedis } from '../../src/queue/redis-connection.js';
import { parseAllowedEndpoint } from '../../src/queue/worker-policy.js';
import { PrivateRedis } from '../../src/testing/redis-server.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * The coordinator's side of the queue against a real Redis and a worker in this process, on one-call episodes: what a
 * restarted coordinator finds, an episode deleted to be redone, and a job no worker can run.
 */
const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const secret = new QueueSecret('the-secret-this-test-shares-with-its-worker');

describe('the queue back-end', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const runDirectory = join(runs, 'queue-run');
  let redis: PrivateRedis;
  let server: ScriptedServer;
  let worker: EpisodeWorker;
  const lines: string[] = [];
  const backend = () =>
    new QueueEpisodeBackend({ url: redis.url, runDirectory, episodesPerEndpoint: 2, pollMs: 200, secret });
  const request = (stepKey: string, episodeId: string, apiKeyEnv?: string) => ({
    stepKey,
    apiKeyEnv,
    options: {
      taskDir,
      model: 'm',
      baseUrl: server.baseUrl,
      seed: 1,
      outDir: join(runDirectory, 'episodes', episodeId),
    },
  });

  /** A worker in this process serving the endpoint at `baseUrl`, logging into `log`. */
  const workerFor = (name: string, baseUrl: string, log: string[], apiKeyVariables: string[] = []) =>
    new EpisodeWorker({
      url: redis.url,
      runsDirectory: runs,
      concurrency: 2,
      name,
      discoverMs: 200,
      secret,
      policy: {
        allowUnsandboxed: false,
        apiKeyVariables,
        endpoints: [parseAllowedEndpoint(new URL(baseUrl).host)],
        suites: [],
        maxAttempts: 5,
        maxDelayMs: 60_000,
        privateDestinations: [],
      },
      log: (line) => log.push(line),
    });

  beforeAll(async () => {
    mkdirSync(join(runDirectory, 'episodes'), { recursive: true });
    redis = await PrivateRedis.start(directory.path);
    server = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('done')] }).responder,
    });
    // The key variable is allowed, and not set on this worker: the last test.
    worker = workerFor('in-process', server.baseUrl, lines, ['MASS_QUEUE_ABSENT_KEY']);
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await server?.close();
    await redis?.stop();
    directory.remove();
  });

  it('runs an episode once: a restarted coordinator finds it; deleted to be redone, it runs again', async () => {
    const first = backend();
    const { record, ran } = await first.run(request('search/L0/tiny-sum/v0/episode', 'L0-tiny-sum-v0'));
    expect({ status: record.status, ran, episodeId: record.episodeId }).toEqual({
      status: 'success',
      ran: true,
      episodeId: 'L0-tiny-sum-v0',
    });
    await first.close();

    const restarted = backend();
    const again = await restarted.run(request('search/L0/tiny-sum/v0/episode', 'L0-tiny-sum-v0'));
    expect(again.ran).toBe(false);
    expect(again.record.timings).toEqual(record.timings);
    expect(lines.filter((line) => line.includes('episode episodes/L0-tiny-sum-v0 ('))).toHaveLength(1);

    // What a search does with an episode lost to an outage: it deletes it and asks again.
    rmSync(join(runDirectory, 'episodes', 'L0-tiny-sum-v0'), { recursive: true });
    const redone = await restarted.run(request('search/L0/tiny-sum/v0/episode', 'L0-tiny-sum-v0'));
    expect(redone.ran).toBe(true);
    expect(redone.record.timings.startedAt).not.toBe(record.timings.startedAt);
    expect(lines.filter((line) => line.includes('episode episodes/L0-tiny-sum-v0 ('))).toHaveLength(2);
    expect(readdirSync(join(runDirectory, 'episodes', '.staging'))).toEqual([]);
    await restarted.close();
  }, 300_000);

  it('runs a collection’s champion runs on the workers', async () => {
    const coordinator = backend();
    const collection = await collectChampionRuns({
      episode: { taskDir, model: 'm', baseUrl: server.baseUrl, teacher: true, dataSeed: 1 },
      outDir: join(runDirectory, 'episodes'),
      prefix: 'L0-distill-tiny-sum',
      runs: 2,
      needed: 2,
      concurrency: 2,
      runEpisode: (options) =>
        coordinator.run({ stepKey: `distill/L0/tiny-sum/collect/${basename(options.outDir)}`, options }),
    });
    expect(collection).toMatchObject({ successes: 2, enough: true, topUps: 0 });
    for (const index of [0, 1]) {
      expect(
        lines.filter((line) => line.includes(`episode episodes/L0-distill-tiny-sum-${index} (`)),
      ).toHaveLength(1);
    }
    await coordinator.close();
  }, 300_000);

  it('signs a waiting job again at half its lifetime, so a worker that comes after it would have expired runs it', async () => {
    const late = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('done')] }).responder,
    });
    const coordinator = new QueueEpisodeBackend({
      url: redis.url,
      runDirectory,
      episodesPerEndpoint: 2,
      pollMs: 100,
      secret,
      jobLifetimeMs: 2000,
    });
    const stepKey = 'search/L0/tiny-sum/v2/episode';
    const issued = join(runDirectory, 'queue', episodeJobId('queue-run', stepKey), 'issued.json');
    const lateLines: string[] = [];
    let lateWorker: EpisodeWorker | undefined;
    try {
      const running = coordinator.run({
        ...request(stepKey, 'L0-tiny-sum-v2'),
        options: { ...request(stepKey, 'L0-tiny-sum-v2').options, baseUrl: late.baseUrl },
      });
      // No worker serves this endpoint yet: the job waits, and is issued anew about every second.
      const nonces = new Set<string>();
      const started = Date.now();
      while (nonces.size < 3 && Date.now() - started < 60_000) {
        if (existsSync(issued)) nonces.add((await IssuedJob.read(issued)).issue.nonce);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(nonces.size).toBe(3);
      expect(Date.now() - started).toBeGreaterThan(2000);
      lateWorker = workerFor('late', late.baseUrl, lateLines);
      await lateWorker.start();
      expect((await running).ran).toBe(true);
      expect(lateLines.filter((line) => line.includes('refused'))).toEqual([]);
    } finally {
      await lateWorker?.close();
      await coordinator.close();
      await late.close();
    }
  }, 120_000);

  it('fails a job whose key the worker lacks at once, naming the variable, and leaves no episode', async () => {
    const coordinator = backend();
    await expect(
      coordinator.run(request('search/L0/tiny-sum/v1/episode', 'L0-tiny-sum-v1', 'MASS_QUEUE_ABSENT_KEY')),
    ).rejects.toThrow(
      /1 attempts\): refused by worker in-process: MASS_QUEUE_ABSENT_KEY is not set on this worker/,
    );
    expect(existsSync(join(runDirectory, 'episodes', 'L0-tiny-sum-v1'))).toBe(false);
    const connection = connectRedis({ url: redis.url });
    const queue = new Queue(endpointQueueName(server.baseUrl), { connection, prefix: QUEUE_PREFIX });
    expect(await queue.getJobState(episodeJobId('queue-run', 'search/L0/tiny-sum/v1/episode'))).toBe(
      'failed',
    );
    expect(await queue.getGlobalConcurrency()).toBe(2);
    await queue.close();
    connection.disconnect();
    await coordinator.close();
  }, 120_000);
});
