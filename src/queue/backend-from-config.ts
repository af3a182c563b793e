import type { RunConfig } from '../config/run-config.js';
import { localEpisodeBackend, type EpisodeBackend } from './episode-backend.js';
import type { QueueEpisodeBackend } from './queue-backend.js';
import { readQueueSecret } from './queue-secret.js';

/**
 * The back-end the run's configuration asks for (`execution`), for the run in `runDirectory`. A queue needs the secret
 * its workers share (a clear error here, before any episode, where none is given). The queue's code (BullMQ and its
 * Redis client, some 300 files) is loaded only for a run that asks for it.
 */
export function episodeBackendFor(config: RunConfig, runDirectory: string): EpisodeBackend {
  const execution = config.execution;
  if (!execution || execution.backend === 'local') return localEpisodeBackend;
  const options = {
    url: execution.redis!,
    passwordEnv: execution.redisPasswordEnv,
    runDirectory,
    episodesPerEndpoint: config.concurrency.episodes,
    secret: readQueueSecret({ file: execution.secretFile, fileSetting: 'execution.secretFile' }),
    ...(execution.jobLifetimeHours === undefined
      ? {}
      : { jobLifetimeMs: execution.jobLifetimeHours * 3600 * 1000 }),
  };
  let backend: Promise<QueueEpisodeBackend> | undefined;
  const queue = () =>
    (backend ??= import('./queue-backend.js').then((module) => new module.QueueEpisodeBackend(options)));
  return {
    kind: 'queue',
    run: async (request) => (await queue()).run(request),
    // Nothing to close where no episode was ever sent.
    close: async () => {
      if (backend) await (await backend).close();
    },
  };
}
