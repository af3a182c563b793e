import { Queue } from 'bullmq';

import { errorMessage, SystemError } from '../errors.js';
import { ENDPOINT_REGISTRY_KEY, QUEUE_PREFIX } from './job-identity.js';
import { printableText } from './printable-text.js';
import { connectRedis, type RedisAddress } from './redis-connection.js';

export interface JobCounts {
  waiting: number;
  active: number;
  completed: number;
  failed: number;
}

export interface EndpointStatus extends JobCounts {
  queue: string;
  baseUrl: string;
  /** BullMQ's global concurrency: episodes at once against this endpoint, across all workers. */
  globalConcurrency: number | null;
}

export interface WorkerStatus {
  worker: string;
  /** Connected to Redis now (a worker that died keeps its finished jobs here, not its connection). */
  connected: boolean;
  active: number;
  completed: number;
  failed: number;
}

export interface QueueStatus {
  endpoints: EndpointStatus[];
  workers: WorkerStatus[];
}

/** What the queues hold now: jobs by state per endpoint, and per worker (from each job's record of who ran it). */
export async function queueStatus(address: RedisAddress): Promise<QueueStatus> {
  const connection = connectRedis(address, { patient: false });
  connection.on('error', () => {});
  try {
    await connection.ping().catch((error: unknown) => {
      throw new SystemError(
        `Redis at ${address.url} does not answer (${errorMessage(error)}): is it running?`,
      );
    });
    const registry = await connection.hgetall(ENDPOINT_REGISTRY_KEY);
    const endpoints: EndpointStatus[] = [];
    const workers = new Map<string, WorkerStatus>();
    const worker = (name: string): WorkerStatus => {
      let status = workers.get(name);
      if (!status)
        workers.set(name, (status = { worker: name, connected: false, active: 0, completed: 0, failed: 0 }));
      return status;
    };
    for (const [name, description] of Object.entries(registry).sort()) {
      const queue = new Queue(name, { connection, prefix: QUEUE_PREFIX });
      const counts = await queue.getJobCounts(
        'waiting',
        'prioritized',
        'delayed',
        'active',
        'completed',
        'failed',
      );
      endpoints.push({
        queue: name,
        baseUrl: registeredBaseUrl(description),
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0),
        active: counts.active ?? 0,
        completed: counts.completed ?? 0,
        failed: counts.failed ?? 0,
        globalConcurrency: await queue.getGlobalConcurrency(),
      });
      for (const client of await queue.getWorkers()) {
        // BullMQ names a worker's connection `<prefix>:<queue>:w:<worker name>`.
        const marker = client.rawname?.lastIndexOf(':w:') ?? -1;
        if (marker >= 0) worker(printableText(client.rawname!.slice(marker + 3), 200)).connected = true;
      }
      for (const state of ['active', 'completed', 'failed'] as const) {
        for (const job of await queue.getJobs(state)) {
          const name = ranBy(job.progress, job.returnvalue);
          if (name) worker(name)[state]++;
        }
      }
    }
    return { endpoints, workers: [...workers.values()].sort((a, b) => a.worker.localeCompare(b.worker)) };
  } finally {
    connection.disconnect();
  }
}

/**
 * The worker's name a job's result or progress records. Anyone with access to Redis can write these, so what is
 * shown is printable and short; it is an account, not a fact the loop relies on.
 */
function ranBy(progress: unknown, result: unknown): string | null {
  for (const value of [result, progress]) {
    if (value && typeof value === 'object' && typeof (value as { worker?: unknown }).worker === 'string') {
      return printableText((value as { worker: string }).worker, 200);
    }
  }
  return null;
}

/** The endpoint a coordinator registered for a queue; a registration written by anyone else does not stop the status. */
function registeredBaseUrl(description: string): string {
  try {
    const baseUrl = (JSON.parse(description) as { baseUrl?: unknown } | null)?.baseUrl;
    if (typeof baseUrl === 'string') return printableText(baseUrl, 500);
  } catch {
    // Shown as unreadable below.
  }
  return '(unreadable registration)';
}
