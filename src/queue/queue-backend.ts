import { rm } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';

import { EpisodeRecord } from '../records/episode-record.js';
import type { EpisodeResult } from '../episode/run-episode.js';
import { errorMessage, SystemError } from '../errors.js';
import { episodePath } from '../store/run-paths.js';
import type { EpisodeBackend, EpisodeRequest } from './episode-backend.js';
import { episodeJobData, type EpisodeJobData } from './episode-job.js';
import { issueJob, recordedIssue, reusableIssue } from './issued-jobs.js';
import { ENDPOINT_REGISTRY_KEY, QUEUE_PREFIX, endpointQueueName, episodeJobId } from './job-identity.js';
import { sameSignature, signEpisodeJob, type JobIssue } from './job-signature.js';
import { printableText } from './printable-text.js';
import type { QueueSecret } from './queue-secret.js';
import { connectRedis, type RedisAddress } from './redis-connection.js';

interface QueueBackendOptions extends RedisAddress {
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
  /**
   * How long a signed job may wait in the queue before a worker refuses it (default 7 days): a job still waiting at
   * half of it is signed again, so only a job copied out of Redis and added again meets the expiry.
   */
  jobLifetimeMs?: number;
}

/** A week: longer than any episode runs, so only a job waiting for days is signed again. */
export const DEFAULT_JOB_LIFETIME_MS = 7 * 24 * 3600 * 1000;
/** BullMQ's name of every episode job; signed with it. */
const JOB_NAME = 'episode';
/** States of a job still waiting for a worker: one that waited half its lifetime is signed again. */
const WAITING_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

/** A job as this coordinator adds it: what it is, where, and for which step. */
interface PendingJob {
  queue: Queue;
  jobId: string;
  stepKey: string;
  data: EpisodeJobData;
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
    const job: PendingJob = {
      queue: await this.queue(request.options.baseUrl),
      jobId,
      stepKey: request.stepKey,
      data: episodeJobData({ runDirectory: this.options.runDirectory, ...request }),
    };
    const { queue, data } = job;
    let issue = await this.retrying(`adding ${jobId}`, () => this.enqueue(job));
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
        const failed = await queue.getJob(jobId);
        await rm(outDir, { recursive: true, force: true });
        throw new SystemError(
          `episode ${data.episodeDir} could not be run on the queue (${failed?.attemptsMade ?? '?'} attempts): ${printableText(failed?.failedReason ?? 'no reason recorded')}`,
        );
      }
      if (state === 'unknown') {
        throw new SystemError(
          `job ${jobId} vanished from Redis: was it flushed? Run the command again to re-add it`,
        );
      }
      if (WAITING_STATES.has(state) && (issue === undefined || Date.now() >= this.renewalTime(issue))) {
        issue = await this.retrying(`signing ${jobId} again`, () => this.enqueue(job));
      }
      await sleep(this.options.pollMs ?? 1000);
    }
  }

  /**
   * Adds the step's job, signed for an issue recorded in the run folder, and returns that issue. A job a worker runs
   * now is left alone. A job waiting in Redis under this coordinator's signature stays; one with another signature
   * (written by someone else, or signed for an earlier issue) is removed first. The recorded issue is kept while it has
   * half its lifetime left, so a coordinator started again signs the same job, which Redis ignores; a job that finished
   * or failed, or that waited too long, is issued anew, and only the new issue's job runs.
   */
  private async enqueue(job: PendingJob): Promise<JobIssue | undefined> {
    const { queue, jobId, stepKey } = job;
    const state = await queue.getJobState(jobId);
    const running = () => recordedIssue(this.options.runDirectory, jobId);
    if (state === 'active') return running();
    let existing = state === 'unknown' ? undefined : await queue.getJob(jobId);
    const lifetime = { jobId, stepKey, lifetimeMs: this.lifetimeMs, now: Date.now() };
    let issue =
      state === 'completed' || state === 'failed'
        ? undefined
        : await reusableIssue(this.options.runDirectory, lifetime);
    if (issue === undefined) {
      // Removed before the new issue is recorded, so that a job a worker took meanwhile keeps its issue.
      if (existing && !(await this.removeUnlessActive(queue, jobId))) return running();
      existing = undefined;
      issue = await issueJob(this.options.runDirectory, lifetime);
    }
    const options = this.jobOptions();
    const signed = signEpisodeJob(this.options.secret, {
      jobId,
      name: JOB_NAME,
      data: job.data,
      issue,
      options,
    });
    if (existing && !sameSignature(existing.data, signed)) {
      if (!(await this.removeUnlessActive(queue, jobId))) return running();
    }
    await queue.add(JOB_NAME, signed, { ...options, jobId });
    return issue;
  }

  /** Removes the job unless a worker holds it now: whether it is gone. */
  private async removeUnlessActive(queue: Queue, jobId: string): Promise<boolean> {
    if ((await queue.remove(jobId)) === 1) return true;
    return (await queue.getJobState(jobId)) !== 'active';
  }

  /** BullMQ's options of every job, signed with it: workers refuse a job whose options were changed in Redis. */
  private jobOptions(): JobsOptions {
    return {
      attempts: this.options.attempts ?? 3,
      backoff: { type: 'exponential', delay: 5000 },
      removeOnComplete: false,
      removeOnFail: false,
    };
  }

  private get lifetimeMs(): number {
    return this.options.jobLifetimeMs ?? DEFAULT_JOB_LIFETIME_MS;
  }

  /** When a job of this issue still waiting is signed again: half its lifetime on. */
  private renewalTime(issue: JobIssue): number {
    return Date.parse(issue.issuedAt) + (Date.parse(issue.expiresAt) - Date.parse(issue.issuedAt)) / 2;
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
