import { rm } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import { EpisodeRecord } from '../episode/episode-record.js';
import type { EpisodeResult } from '../episode/run-episode.js';
import { errorMessage, SystemError } from '../errors.js';
import { episodePath } from '../store/run-paths.js';
import type { EpisodeBackend, EpisodeRequest } from './episode-backend.js';
import { episodeJobData } from './episode-job.js';
import { ENDPOINT_REGISTRY_KEY, QUEUE_PREFIX, endpointQueueName, episodeJobId } from './job-identity.js';
import { sameSignature, signEpisodeJob } from './job-signature.js';
import { printableText } from './printable-text.js';
import type { QueueSecret } from './queue-secret.js';
import { connectRedis, type RedisAddress } from './redis-connection.js';

export interface QueueBackendOptions extends RedisAddress {
  /** The coordinator's run directory; workers find it by its name under their `--runs` directory. */
  runDirectory: string;
  /** Episodes running at once per model endpoint, across every worker (BullMQ's global concurrency). */
  episodesPerEndpoint: number;
  /** The secret shared with the workers: every job is signed with it, and workers refuse jobs it did not sign. */
  secret: QueueSecret;
  /** How often a waiting episode's job is asked after (default 1 s). */
  pollMs?: number;
  /** Attempts of a job that the infrastructure lost (a worker error, not a failed episode); default 3. */
  attempts?: number;
}

/**
 * The coordinator's side of the queue: each episode becomes a job of its endpoint's queue, with an id made from the
 * run and the step, and the coordinator waits for its record to appear in the shared run directory. Nothing else is
 * written by the workers that the coordinator reads: `mass.db` stays the coordinator's alone.
 */
export class QueueEpisodeBackend implements EpisodeBackend {
  readonly kind = 'queue' as const;
  private readonly connection: Redis;
  private readonly queues = new Map<string, Promise<Queue>>();

  constructor(private readonly options: QueueBackendOptions) {
    this.connection = connectRedis(options);
    // ioredis reconnects on its own; without a listener an outage would be an unhandled error event.
    this.connection.on('error', () => {});
  }

  async run(request: EpisodeRequest): Promise<EpisodeResult> {
    const outDir = resolve(request.options.outDir);
    const recordPath = episodePath(outDir, 'record');
    const finished = await EpisodeRecord.readIfPresent(recordPath);
    if (finished) return { record: finished, ran: false };
    const runName = resolve(this.options.runDirectory).split(sep).pop()!;
    const jobId = episodeJobId(runName, request.stepKey);
    const queue = await this.queue(request.options.baseUrl);
    const data = signEpisodeJob(
      this.options.secret,
      jobId,
      episodeJobData({ runDirectory: this.options.runDirectory, ...request }),
    );
    await this.retrying(`adding ${jobId}`, async () => {
      const state = await queue.getJobState(jobId);
      const existing = state === 'unknown' ? undefined : await queue.getJob(jobId);
      if (state === 'completed') {
        // Done, yet its episode is gone: the coordinator deleted it to run it again (lost to an outage).
        await queue.remove(jobId);
      } else if (existing && state !== 'active' && !sameSignature(existing.data, data)) {
        // Not this coordinator's job under its id (written by someone else, or signed with an earlier secret): the
        // workers would refuse it, so it gives way to this one.
        await queue.remove(jobId);
      } else if (state === 'failed') {
        // Failed before this coordinator (re)started: one more go, as a rerun of a local search would give.
        await (await queue.getJob(jobId))?.retry('failed');
        return;
      }
      await queue.add('episode', data, {
        jobId,
        attempts: this.options.attempts ?? 3,
        backoff: { type: 'exponential', delay: 5000 },
        removeOnComplete: false,
        removeOnFail: false,
      });
    });
    for (;;) {
      const state = await this.retrying(`asking after ${jobId}`, () => queue.getJobState(jobId));
      if (state === 'completed') {
        const record = await EpisodeRecord.readIfPresent(recordPath);
        if (record) return { record, ran: true };
        throw new SystemError(
          `job ${jobId} finished but ${recordPath} is missing: is ${this.options.runDirectory} the directory the workers see under --runs?`,
        );
      }
      if (state === 'failed') {
        const job = await queue.getJob(jobId);
        await rm(outDir, { recursive: true, force: true });
        throw new SystemError(
          `episode ${data.episodeDir} could not be run on the queue (${job?.attemptsMade ?? '?'} attempts): ${printableText(job?.failedReason ?? 'no reason recorded')}`,
        );
      }
      if (state === 'unknown') {
        throw new SystemError(
          `job ${jobId} vanished from Redis: was it flushed? Run the command again to re-add it`,
        );
      }
      await sleep(this.options.pollMs ?? 1000);
    }
  }

  async close(): Promise<void> {
    for (const queue of this.queues.values()) await (await queue).close();
    this.connection.disconnect();
  }

  private queue(baseUrl: string): Promise<Queue> {
    const name = endpointQueueName(baseUrl);
    let queue = this.queues.get(name);
    if (!queue) {
      queue = (async () => {
        const created = new Queue(name, { connection: this.connection, prefix: QUEUE_PREFIX });
        created.on('error', () => {});
        await this.retrying(`creating queue ${name}`, async () => {
          await created.setGlobalConcurrency(this.options.episodesPerEndpoint);
          await this.connection.hset(ENDPOINT_REGISTRY_KEY, name, JSON.stringify({ baseUrl }));
        });
        return created;
      })();
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Redis going away (a restart, a failover) pauses the coordinator; it does not fail the search. */
  private async retrying<T>(what: string, action: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + REDIS_OUTAGE_MS;
    for (;;) {
      try {
        return await action();
      } catch (error) {
        if (Date.now() > deadline)
          throw new SystemError(`Redis failed while ${what}: ${errorMessage(error)}`);
        await sleep(1000);
      }
    }
  }
}

/** How long the coordinator waits for Redis to come back before a search step fails (and is redone on resume). */
const REDIS_OUTAGE_MS = 10 * 60 * 1000;
