import { createHash } from 'node:crypto';

/** Every key BullMQ writes for mass starts with this, beside `mass:endpoints`. */
export const QUEUE_PREFIX = 'mass';
/** The Redis hash naming each endpoint's queue, so that workers find the queues without being told. */
export const ENDPOINT_REGISTRY_KEY = `${QUEUE_PREFIX}:endpoints`;

/**
 * The job of one episode: the same for the same run and step, so a coordinator restarted at any moment adds the same
 * id again, which BullMQ ignores while the job exists. BullMQ refuses `:` in ids; run names cannot hold one.
 */
export function episodeJobId(runName: string, stepKey: string): string {
  return `episode.${runName}.${digest(stepKey).slice(0, 24)}`;
}

/**
 * One queue per model endpoint: its global concurrency bounds the episodes sending calls to that server, however
 * many workers take from it.
 */
export function endpointQueueName(baseUrl: string): string {
  return `episodes-${digest(baseUrl.replace(/\/+$/, '')).slice(0, 16)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
