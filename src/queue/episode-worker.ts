import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';

import { EpisodeRecord } from '../records/episode-record.js';
import { runEpisode, type EpisodeOptions } from '../episode/run-episode.js';
import { errorMessage, UserError } from '../errors.js';
import { declareReplicas } from '../model/replicas.js';
import { episodePath } from '../store/run-paths.js';
import { durationMs } from '../timer-duration.js';
import { EpisodeJobData, episodeOptionsOnWorker, type EpisodeJobResult } from './episode-job.js';
import { startIssuedJob, type IssuedJobStart } from './issued-jobs.js';
import { ENDPOINT_REGISTRY_KEY, QUEUE_PREFIX, endpointQueueName, episodeJobId } from './job-identity.js';
import { verifyEpisodeJob, type JobIssue, type JobOptions } from './job-signature.js';
import { printableText } from './printable-text.js';
import type { QueueSecret } from './queue-secret.js';
import { connectRedis, type RedisAddress } from './redis-connection.js';
import { endpointRefusal, policyRefusal, scheduleRefusal, type WorkerPolicy } from './worker-policy.js';

interface EpisodeWorkerOptions extends RedisAddress {
  /** The shared folder holding the run directories, as this machine sees it. */
  runsDirectory: string;
  /** Episodes this worker runs at once, per endpoint queue. */
  concurrency: number;
  /** The secret the coordinators sign their jobs with: a job without its signature is refused. */
  secret: QueueSecret;
  /** What this worker's command line allows its episodes (sandbox, keys, endpoints, suites). */
  policy: WorkerPolicy;
  /** Host paths hidden from the agents beside `runsDirectory` (the secret's file). */
  hiddenPaths?: string[];
  /** The worker's name in `mass queue status` (default host and process id). */
  name?: string;
  /**
   * How long a job's lock lasts unless renewed (renewed at half of it while the episode runs): a worker that dies
   * loses its jobs to others after about this long plus one stalled check (default 30 s).
   */
  lockSeconds?: number;
  /** How often the worker looks for queues of new endpoints (default 2 s). */
  discoverMs?: number;
  log?: (line: string) => void;
}

/** Folder beside the finished episodes where they are written; a name never taken for an episode's. */
export const STAGING_FOLDER = '.staging';
/** A job whose worker died is taken again; three deaths in a row mean something else is wrong. */
const MAX_STALLED_COUNT = 3;

/** A job this worker takes: its checked data, where it runs, and the issue it was signed for. */
interface AdmittedJob {
  data: EpisodeJobData;
  runDirectory: string;
  episodeDir: string;
  options: Omit<EpisodeOptions, 'outDir'>;
  issue: JobIssue;
  /** Starts the issue allows in all: its signed attempts, and as many stalls as BullMQ gives a job. */
  maxStarts: number;
}

/**
 * A worker: takes episode jobs from every endpoint's queue, runs each exactly as a local episode runs (its own
 * sandbox and recording proxy), writing it under a staging name in the shared run directory and renaming it into
 * place when it is finished, so a half-written episode is never taken for a finished one.
 */
export class EpisodeWorker {
  readonly name: string;
  private readonly connection: Redis;
  private readonly workers = new Map<string, Worker>();
  /** Queues of endpoints this worker does not serve, said once each. */
  private readonly passedOver = new Set<string>();
  private readonly connections: Redis[] = [];
  private stopped = false;
  private discovery: Promise<void> | undefined;

  constructor(private readonly options: EpisodeWorkerOptions) {
    this.name = options.name ?? `${hostname()}-${process.pid}`;
    this.connection = connectRedis(options);
    this.connection.on('error', () => {});
  }

  /** Starts taking jobs; returns once the queues known now are listened to. */
  async start(): Promise<void> {
    await this.discover();
    this.discovery = (async () => {
      while (!this.stopped) {
        await sleep(this.options.discoverMs ?? 2000);
        if (!this.stopped) await this.discover().catch(() => {});
      }
    })();
  }

  /** Lets running episodes finish (their jobs stay locked meanwhile), then disconnects. */
  async close(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.workers.values()].map((worker) => worker.close()));
    await this.discovery;
    // BullMQ leaves a connection it was given open: each worker's own, then the shared one.
    for (const connection of this.connections) connection.disconnect();
    this.connection.disconnect();
  }

  private duplicateConnection(): Redis {
    const connection = this.connection.duplicate();
    connection.on('error', () => {});
    this.connections.push(connection);
    return connection;
  }

  /**
   * Listens to the queue of every registered endpoint this worker serves. The registry is anyone's to write, so it
   * only saves listening to queues whose jobs would be refused: each job's own endpoint is checked when it is taken.
   */
  private async discover(): Promise<void> {
    const registry = await this.connection.hgetall(ENDPOINT_REGISTRY_KEY);
    for (const [name, description] of Object.entries(registry)) {
      if (this.workers.has(name) || this.passedOver.has(name) || this.stopped) continue;
      const refusal = this.registeredEndpointRefusal(name, description);
      if (refusal !== null) {
        this.passedOver.add(name);
        this.options.log?.(
          `worker ${this.name}: not taking episodes from ${printableText(name)}: ${refusal}`,
        );
        continue;
      }
      const lockDuration = durationMs(this.options.lockSeconds ?? 30, 's');
      const worker = new Worker(name, (job: Job) => this.process(job), {
        connection: this.duplicateConnection(),
        prefix: QUEUE_PREFIX,
        concurrency: this.options.concurrency,
        name: this.name,
        lockDuration,
        stalledInterval: lockDuration,
        maxStalledCount: MAX_STALLED_COUNT,
      });
      worker.on('error', (error) => this.options.log?.(`worker ${this.name}: ${errorMessage(error)}`));
      this.workers.set(name, worker);
      this.options.log?.(`worker ${this.name}: taking episodes from ${name}`);
    }
  }

  /**
   * The job's episode as this worker runs it, or an `UnrecoverableError` saying why the worker refuses it: BullMQ then
   * marks the job failed with that reason at once, never to be retried, and nothing of it has run, nor been written
   * but the worker's name in its progress. First its signature and its expiry (anyone with access to Redis can add a
   * job or change its options), then its form, then what this worker allows. Whether its coordinator issued it is
   * asked of the run folder (`recordStart`).
   */
  private admit(job: Job): AdmittedJob {
    const verdict = verifyEpisodeJob(this.options.secret, {
      id: job.id,
      name: job.name,
      data: job.data,
      opts: job.opts,
    });
    if (!verdict.authentic) return this.refuse(job, verdict.reason);
    const parsed = EpisodeJobData.safeParse(verdict.data);
    if (!parsed.success)
      return this.refuse(job, `it is not an episode job: ${z.prettifyError(parsed.error)}`);
    const data = parsed.data;
    const refusal =
      policyRefusal(this.options.policy, data) ?? scheduleRefusal(this.options.policy, verdict.options);
    if (refusal !== null) return this.refuse(job, refusal);
    if (endpointQueueName(data.options.baseUrl) !== job.queueName) {
      return this.refuse(job, `it is in the queue of another endpoint than its own, ${data.options.baseUrl}`);
    }
    let located: ReturnType<typeof episodeOptionsOnWorker>;
    try {
      located = episodeOptionsOnWorker(data, {
        runsDirectory: this.options.runsDirectory,
        suites: this.options.policy.suites,
      });
    } catch (error) {
      if (error instanceof UserError) return this.refuse(job, errorMessage(error));
      throw error;
    }
    // The id names the job's record in the run folder: it must be the one of its run and step.
    if (episodeJobId(data.runName, data.stepKey) !== job.id) {
      return this.refuse(job, `its id is not the one of its run and step (${data.stepKey})`);
    }
    return { data, ...located, issue: verdict.issue, maxStarts: maxStarts(verdict.options) };
  }

  /**
   * Records this start of the job in the run folder, refused unless its coordinator issued it under this nonce and it
   * has neither finished nor used up its starts: a signed job read from Redis and added again does not run again.
   */
  private async recordStart(job: Job, admitted: AdmittedJob): Promise<IssuedJobStart> {
    try {
      return await startIssuedJob(admitted.runDirectory, {
        jobId: String(job.id),
        stepKey: admitted.data.stepKey,
        issue: admitted.issue,
        maxStarts: admitted.maxStarts,
      });
    } catch (error) {
      if (error instanceof UserError) return this.refuse(job, errorMessage(error));
      throw error;
    }
  }

  /** Logs why the job is refused and fails it with that reason, never to be retried. */
  private refuse(job: Job, reason: string): never {
    const why = printableText(reason);
    this.options.log?.(`worker ${this.name}: refused job ${printableText(String(job.id))}: ${why}`);
    throw new UnrecoverableError(`refused by worker ${this.name}: ${why}`);
  }

  private registeredEndpointRefusal(name: string, description: string): string | null {
    let baseUrl: unknown;
    try {
      baseUrl = (JSON.parse(description) as { baseUrl?: unknown }).baseUrl;
    } catch {
      return 'its registration is not what a coordinator writes';
    }
    if (typeof baseUrl !== 'string' || endpointQueueName(baseUrl) !== name) {
      return 'its registration does not name the endpoint the queue is for';
    }
    return endpointRefusal(this.options.policy, baseUrl);
  }

  private async process(job: Job): Promise<EpisodeJobResult> {
    // The worker's name first, refused or not: `mass queue status` counts each worker's refusals.
    await job.updateProgress({ worker: this.name });
    const admitted = this.admit(job);
    const { data, episodeDir, options } = admitted;
    // Finished by another attempt of this issue (this worker's lock was lost): nothing runs, the episode stands.
    const finalRecord = await EpisodeRecord.readIfPresent(episodePath(episodeDir, 'record'));
    if (finalRecord) return { worker: this.name, episodeDir: data.episodeDir, ran: false };
    const started = await this.recordStart(job, admitted);

    const episodeId = basename(episodeDir);
    const stagingRoot = join(dirname(episodeDir), STAGING_FOLDER);
    await cleanStaged(stagingRoot, episodeId);
    // A folder of this attempt's own: a worker that lost its lock but still runs cannot write into the new attempt.
    const attemptDir = join(stagingRoot, `${this.name}-${randomBytes(4).toString('hex')}`);
    const stagedDir = join(attemptDir, episodeId);
    await mkdir(attemptDir, { recursive: true });
    this.options.log?.(
      `worker ${this.name}: episode ${data.episodeDir} (attempt ${job.attemptsMade + 1}, start ${started.start} of at most ${admitted.maxStarts})`,
    );
    // The episode's calls spread over the model's replicas as they would on the coordinator.
    declareReplicas(data.options.baseUrl, data.replicas ?? []);
    try {
      await runEpisode({
        ...options,
        outDir: stagedDir,
        // Every run directory, not only this one's episodes folder, is out of the agents' sight.
        hiddenDirectories: [this.options.runsDirectory, ...(this.options.hiddenPaths ?? [])],
      });
    } catch (error) {
      await rm(attemptDir, { recursive: true, force: true });
      if (error instanceof UserError) throw new UnrecoverableError(errorMessage(error));
      throw error;
    }
    if (
      (await EpisodeRecord.readIfPresent(episodePath(episodeDir, 'record'))) ||
      !(await started.finish(this.name))
    ) {
      // Another attempt finished first (this worker had lost its lock), or the coordinator issued the step's job anew:
      // the first finished episode stands.
      await rm(attemptDir, { recursive: true, force: true });
      return { worker: this.name, episodeDir: data.episodeDir, ran: false };
    }
    if (existsSync(episodeDir)) await rm(episodeDir, { recursive: true, force: true });
    await rename(stagedDir, episodeDir);
    await rmdir(attemptDir).catch(() => {});
    return { worker: this.name, episodeDir: data.episodeDir, ran: true };
  }
}

/** The starts a job's issue allows: its attempts (at least one), and a start after each stall BullMQ allows. */
function maxStarts(options: JobOptions): number {
  const attempts = typeof options.attempts === 'number' ? options.attempts : 0;
  return Math.max(attempts, 1) + MAX_STALLED_COUNT;
}

/** Removes what earlier attempts of this episode left half-written (a worker killed mid-episode). */
async function cleanStaged(stagingRoot: string, episodeId: string): Promise<void> {
  let attempts: string[];
  try {
    attempts = await readdir(stagingRoot);
  } catch {
    return;
  }
  for (const attempt of attempts) {
    const staged = join(stagingRoot, attempt, episodeId);
    if (!existsSync(staged)) continue;
    await rm(staged, { recursive: true, force: true });
    await rmdir(join(stagingRoot, attempt)).catch(() => {});
  }
}
