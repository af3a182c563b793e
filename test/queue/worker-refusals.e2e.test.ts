import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RunConfig } from '../../src/config/run-config.js';
import { episodeBackendFor } from '../../src/queue/backend-from-config.js';
import { EpisodeWorker } from '../../src/queue/episode-worker.js';
import { episodeJobData, type EpisodeJobData } from '../../src/queue/episode-job.js';
import {
  ENDPOINT_REGISTRY_KEY,
  QUEUE_PREFIX,
  endpointQueueName,
  episodeJobId,
} from '../../src/queue/job-identity.js';
import { signEpisodeJob } from '../../src/queue/job-signature.js';
import { QueueEpisodeBackend } from '../../src/queue/queue-backend.js';
import { QUEUE_SECRET_VARIABLE, QueueSecret } from '../../src/queue/queue-secret.js';
import { queueStatus } from '../../src/queue/queue-status.js';
import { connectRedis } from '../../src/queue/redis-connection.js';
import { parseAllowedEndpoint } from '../../src/queue/worker-policy.js';
import { PrivateRedis } from '../../src/testing/redis-server.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * Jobs written into a real Redis by someone other than the coordinator, taken by a real worker: each is refused,
 * recorded as failed with its reason and not retried, and nothing of it runs: no workspace is made and the
 * attacker's server, which every hand-made job names as its model server, sees no connection.
 */
const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const KEY_VARIABLE = 'MASS_REFUSAL_TEST_KEY';
const OTHER_VARIABLE = 'MASS_REFUSAL_OTHER_SECRET';
const secret = new QueueSecret('the-coordinators-and-workers-shared-secret');
/** BullMQ's options of the jobs this test writes by hand: attempts to spare, none of them waited for. */
const HAND_OPTIONS: JobsOptions = { attempts: 5, backoff: { type: 'fixed', delay: 0 } };

describe('a worker given jobs it did not allow', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const runDirectory = join(runs, 'attack-run');
  const episodes = join(runDirectory, 'episodes');
  let redis: PrivateRedis;
  let model: ScriptedServer;
  let attacker: Server;
  let attackerUrl: string;
  let attackerConnections = 0;
  let worker: EpisodeWorker;
  let connection: Redis;
  let queue: Queue;
  const lines: string[] = [];

  /** A job as a coordinator would make it, then changed as the attacker likes. */
  const made = (
    episodeId: string,
    options: { baseUrl?: string; sandbox?: 'unsandboxed'; apiKeyEnv?: string } = {},
  ): EpisodeJobData =>
    episodeJobData({
      runDirectory,
      stepKey: `attack/${episodeId}`,
      apiKeyEnv: options.apiKeyEnv,
      options: {
        taskDir,
        model: 'm',
        baseUrl: options.baseUrl ?? model.baseUrl,
        seed: 1,
        outDir: join(episodes, episodeId),
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      },
    });

  /** Adds the job under the coordinator's id, with attempts to spare, and waits for the worker to settle it. */
  const refusalOf = async (episodeId: string, data: object, into: Queue = queue, options = HAND_OPTIONS) => {
    const id = episodeJobId('attack-run', `attack/${episodeId}`);
    await into.add('episode', data, { ...options, jobId: id });
    await until(async () => ((await into.getJobState(id)) === 'failed' ? true : undefined));
    const job = (await into.getJob(id))!;
    return { reason: job.failedReason, attemptsMade: job.attemptsMade, id };
  };

  /** The step's episode run by a coordinator of the run through the queue, as a search runs it. */
  const coordinatorRun = async (stepKey: string, outDir: string) => {
    const coordinator = new QueueEpisodeBackend({
      url: redis.url,
      runDirectory,
      episodesPerEndpoint: 2,
      pollMs: 200,
      secret,
    });
    try {
      return await coordinator.run({
        stepKey,
        apiKeyEnv: KEY_VARIABLE,
        options: { taskDir, model: 'm', baseUrl: model.baseUrl, seed: 1, outDir },
      });
    } finally {
      await coordinator.close();
    }
  };

  /** The job signed with `key` as a coordinator signs one, for the options `refusalOf` adds it with. */
  const signed = (episodeId: string, data: EpisodeJobData, key = secret) =>
    signEpisodeJob(key, {
      jobId: episodeJobId('attack-run', `attack/${episodeId}`),
      name: 'episode',
      data,
      issue: {
        nonce: randomBytes(16).toString('hex'),
        issuedAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
      options: HAND_OPTIONS,
    });

  beforeAll(async () => {
    mkdirSync(episodes, { recursive: true });
    process.env[KEY_VARIABLE] = 'the-allowed-key';
    process.env[OTHER_VARIABLE] = 'a-secret-of-the-worker-no-episode-may-use';
    redis = await PrivateRedis.start(directory.path);
    model = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('done')] }).responder,
    });
    attacker = createServer((socket) => {
      attackerConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as { port: number }).port}/v1`;
    connection = connectRedis({ url: redis.url });
    // The endpoint's queue as a coordinator registers it, so that the worker listens to it.
    queue = new Queue(endpointQueueName(model.baseUrl), { connection, prefix: QUEUE_PREFIX });
    await connection.hset(ENDPOINT_REGISTRY_KEY, queue.name, JSON.stringify({ baseUrl: model.baseUrl }));
    worker = new EpisodeWorker({
      url: redis.url,
      runsDirectory: runs,
      concurrency: 2,
      name: 'guarded',
      discoverMs: 200,
      secret,
      policy: {
        allowUnsandboxed: false,
        apiKeyVariables: [KEY_VARIABLE],
        endpoints: [parseAllowedEndpoint(new URL(model.baseUrl).host)],
        suites: [],
        maxAttempts: 5,
        maxDelayMs: 60_000,
        privateDestinations: [],
      },
      log: (line) => lines.push(line),
    });
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await queue?.close();
    connection?.disconnect();
    await model?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await redis?.stop();
    delete process.env[KEY_VARIABLE];
    delete process.env[OTHER_VARIABLE];
    directory.remove();
  });

  const nothingRan = (...episodeIds: string[]) => {
    expect(attackerConnections).toBe(0);
    for (const episodeId of episodeIds) expect(existsSync(join(episodes, episodeId))).toBe(false);
    expect(existsSync(join(episodes, '.staging'))).toBe(false);
    expect(model.requests).toHaveLength(0);
  };

  it('refuses a job without a signature, or with a wrong one, whatever it asks', async () => {
    const hostile = made('unsigned', {
      baseUrl: attackerUrl,
      sandbox: 'unsandboxed',
      apiKeyEnv: OTHER_VARIABLE,
    });
    const unsigned = await refusalOf('unsigned', hostile);
    expect(unsigned.reason).toMatch(/^refused by worker guarded: it carries no signature/);
    expect(unsigned.attemptsMade).toBeLessThan(5);

    const forged = made('forged', {
      baseUrl: attackerUrl,
      sandbox: 'unsandboxed',
      apiKeyEnv: OTHER_VARIABLE,
    });
    const wrong = await refusalOf('forged', signed('forged', forged, new QueueSecret('g'.repeat(40))));
    expect(wrong.reason).toMatch(/its signature does not match/);

    // A coordinator's signed job, changed in Redis to run unsandboxed.
    const changed = signed('changed', made('changed'));
    const tampered = await refusalOf('changed', {
      ...changed,
      options: { ...changed.options, sandbox: 'unsandboxed' },
    });
    expect(tampered.reason).toMatch(/its signature does not match/);
    nothingRan('unsigned', 'forged', 'changed');
    expect(lines.join('\n')).toMatch(
      /worker guarded: refused job episode\.attack-run\.\w+: it carries no signature/,
    );
  }, 120_000);

  it('refuses a signed job asking for what its command line did not allow', async () => {
    const unsandboxed = await refusalOf(
      'unsandboxed',
      signed('unsandboxed', made('unsandboxed', { sandbox: 'unsandboxed' })),
    );
    expect(unsandboxed.reason).toMatch(
      /asks to run unsandboxed, and this worker was not started with --allow-unsandboxed/,
    );
    expect(unsandboxed.attemptsMade).toBeLessThan(5);

    const key = await refusalOf(
      'other-key',
      signed('other-key', made('other-key', { apiKeyEnv: OTHER_VARIABLE })),
    );
    expect(key.reason).toMatch(
      new RegExp(
        `asks for the key in ${OTHER_VARIABLE}, which this worker does not give episodes \\(--api-key-env: ${KEY_VARIABLE}\\)`,
      ),
    );

    const endpoint = await refusalOf(
      'attacker-endpoint',
      signed(
        'attacker-endpoint',
        made('attacker-endpoint', { baseUrl: attackerUrl, apiKeyEnv: KEY_VARIABLE }),
      ),
    );
    expect(endpoint.reason).toMatch(/its model server 127\.0\.0\.1:\d+ is not one this worker serves/);

    // Written for another run's folder: the run folder must be there under --runs.
    const elsewhere = { ...made('elsewhere'), runName: 'not-a-run' };
    const outside = await refusalOf('elsewhere', signed('elsewhere', elsewhere));
    expect(outside.reason).toMatch(/its run folder not-a-run is not under --runs/);
    expect(existsSync(join(runs, 'not-a-run'))).toBe(false);
    nothingRan('unsandboxed', 'other-key', 'attacker-endpoint');
  }, 120_000);

  it('does not listen to the queue of an endpoint it does not serve', async () => {
    const name = endpointQueueName(attackerUrl);
    await connection.hset(ENDPOINT_REGISTRY_KEY, name, JSON.stringify({ baseUrl: attackerUrl }));
    const attackerQueue = new Queue(name, { connection, prefix: QUEUE_PREFIX });
    const id = episodeJobId('attack-run', 'attack/own-queue');
    await attackerQueue.add('episode', signed('own-queue', made('own-queue', { baseUrl: attackerUrl })), {
      ...HAND_OPTIONS,
      jobId: id,
    });
    await until(() =>
      lines.some((line) => line.includes(`not taking episodes from ${name}`)) ? true : undefined,
    );
    expect(lines.find((line) => line.includes(name))).toMatch(/is not one this worker serves/);
    expect(await attackerQueue.getJobState(id)).toBe('waiting');
    await attackerQueue.close();
    nothingRan('own-queue');
  }, 60_000);

  it('runs its coordinator’s job, which takes the place of a hand-made one under its id', async () => {
    const stepKey = 'attack/squatted';
    await refusalOf('squatted', made('squatted'));
    const { record, ran } = await coordinatorRun(stepKey, join(episodes, 'squatted'));
    expect({ status: record.status, ran }).toEqual({ status: 'success', ran: true });
    expect(model.requests.length).toBeGreaterThan(0);
    expect(readdirSync(join(episodes, '.staging'))).toEqual([]);
    expect(attackerConnections).toBe(0);
  }, 300_000);

  it('keeps `mass queue status` answering through a registration written by hand, counting the refusals', async () => {
    await connection.hset(ENDPOINT_REGISTRY_KEY, 'episodes-handmade', '{"baseUrl": "\u001b[2J');
    const status = await queueStatus({ url: redis.url });
    expect(status.endpoints.map((endpoint) => endpoint.baseUrl)).toContain('(unreadable registration)');
    expect(status.endpoints.find((endpoint) => endpoint.baseUrl === model.baseUrl)).toMatchObject({
      completed: 1,
      failed: 7,
    });
    expect(status.workers).toEqual([
      expect.objectContaining({ worker: 'guarded', connected: true, completed: 1, failed: 7 }),
    ]);
    await until(() =>
      lines.some((line) => line.includes('not taking episodes from episodes-handmade')) ? true : undefined,
    );
  }, 60_000);

  it('needs the secret on the coordinator and on the worker, and a worker names what it serves', async () => {
    delete process.env[QUEUE_SECRET_VARIABLE];
    const config = { execution: { backend: 'queue', redis: redis.url }, concurrency: { episodes: 1 } };
    expect(() => episodeBackendFor(config as unknown as RunConfig, runDirectory)).toThrow(
      /episode queue needs a secret shared by the coordinator and its workers.*MASS_QUEUE_SECRET.*execution\.secretFile/,
    );
    const worker = ['worker', '--redis', redis.url, '--runs', runs];
    const noSecret = await runMass([...worker, '--allow-endpoint', 'gpu-1:8000'], {
      [QUEUE_SECRET_VARIABLE]: '',
    });
    expect({ code: noSecret.code, stderr: noSecret.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/export MASS_QUEUE_SECRET=.*--secret-file/),
    });
    const noAttempts = await runMass([...worker, '--allow-endpoint', 'gpu-1:8000', '--max-attempts', '0'], {
      [QUEUE_SECRET_VARIABLE]: 'h'.repeat(40),
    });
    expect({ code: noAttempts.code, stderr: noAttempts.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/--max-attempts must be at least 1/),
    });
    const noEndpoint = await runMass(worker, { [QUEUE_SECRET_VARIABLE]: 'h'.repeat(40) });
    expect({ code: noEndpoint.code, stderr: noEndpoint.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/serves no model endpoint: .*--allow-endpoint host:port/),
    });
  }, 120_000);

  it('refuses its coordinator’s finished job added to Redis again, with other options, or never issued, running nothing', async () => {
    const stepKey = 'attack/replayed';
    const id = episodeJobId('attack-run', stepKey);
    const outDir = join(episodes, 'replayed');
    expect((await coordinatorRun(stepKey, outDir)).ran).toBe(true);
    const calls = model.requests.length;
    const finished = (await queue.getJob(id))!;
    const copied = { data: finished.data as object, opts: finished.opts };

    // Its episode gone, the job as Redis held it is added again: same id, data, options and signature.
    rmSync(outDir, { recursive: true });
    await queue.remove(id);
    const replayed = await refusalOf('replayed', copied.data, queue, copied.opts);
    expect(replayed.reason).toMatch(
      /^refused by worker guarded: it already ran to the end \(finished by worker guarded at .*\)/,
    );
    // The same with more attempts, a delay and a priority.
    await queue.remove(id);
    const rescheduled = await refusalOf('replayed', copied.data, queue, {
      ...copied.opts,
      attempts: 500,
      delay: 10,
      priority: 3,
    });
    expect(rescheduled.reason).toMatch(/its signature does not match: .*BullMQ options/);
    // Signed with the secret, but not the job its coordinator issued for the step, or for a step it never issued.
    await queue.remove(id);
    const other = await refusalOf(
      'replayed',
      signed('replayed', made('replayed', { apiKeyEnv: KEY_VARIABLE })),
    );
    expect(other.reason).toMatch(/it is not the job its coordinator issued for this step/);
    const never = await refusalOf('never-issued', signed('never-issued', made('never-issued')));
    expect(never.reason).toMatch(/its coordinator never issued it/);

    expect(model.requests).toHaveLength(calls);
    expect(existsSync(outDir)).toBe(false);
    expect(existsSync(join(episodes, 'never-issued'))).toBe(false);
    expect(readdirSync(join(episodes, '.staging'))).toEqual([]);
    expect(lines.filter((line) => line.includes(`refused job ${id}`))).toHaveLength(3);
  }, 300_000);
});

async function until<T>(probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
