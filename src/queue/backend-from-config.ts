import type { RunConfig } from '../config/run-config.js';
import { localEpisodeBackend, type EpisodeBackend } from './episode-backend.js';
import { QueueEpisodeBackend } from './queue-backend.js';
import { readQueueSecret } from './queue-secret.js';

/**
 * The back-end the run's configuration asks for (`execution`), for the run in `runDirectory`. A queue needs the secret
 * its workers share (a clear error here, before any episode, where none is given).
 */
export function episodeBackendFor(config: RunConfig, runDirectory: string): EpisodeBackend {
  const execution = config.execution;
  if (!execution || execution.backend === 'local') return localEpisodeBackend;
  return new QueueEpisodeBackend({
    url: execution.redis!,
    passwordEnv: execution.redisPasswordEnv,
    runDirectory,
    episodesPerEndpoint: config.concurrency.episodes,
    secret: readQueueSecret({ file: execution.secretFile, fileSetting: 'execution.secretFile' }),
    ...(execution.jobLifetimeHours === undefined
      ? {}
      : { jobLifetimeMs: execution.jobLifetimeHours * 3600 * 1000 }),
  });
}
