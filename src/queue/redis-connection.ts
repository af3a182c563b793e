import { Redis } from 'ioredis';

import { UserError } from '../errors.js';

export interface RedisAddress {
  /** `redis://host:port[/db]`, without a password. */
  url: string;
  /** The environment variable holding Redis's password, if it has one. */
  passwordEnv?: string;
}

/**
 * A connection as BullMQ wants it: commands wait through a reconnection instead of failing after a few retries, so
 * a Redis restart pauses the coordinator and the workers rather than failing their episodes.
 */
export function connectRedis(address: RedisAddress, options: { patient?: boolean } = {}): Redis {
  const url = parseRedisUrl(address.url);
  const password = address.passwordEnv ? process.env[address.passwordEnv] : undefined;
  if (address.passwordEnv && !password) {
    throw new UserError(`${address.passwordEnv} is not set: it should hold the Redis password`);
  }
  const patient = options.patient ?? true;
  return new Redis(url.toString(), {
    ...(password ? { password } : {}),
    enableReadyCheck: true,
    // Impatient (a status query): a Redis that does not answer within a few seconds is an error to show.
    maxRetriesPerRequest: patient ? null : 1,
    retryStrategy: (attempt) => (patient ? Math.min(250 * attempt, 2000) : attempt > 5 ? null : 500),
  });
}

/** A Redis URL, refused when it carries a password: that would be written into the frozen configuration. */
export function parseRedisUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UserError(`"${text}" is not a Redis URL: write redis://host:port`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new UserError(`"${text}" is not a Redis URL: write redis://host:port (or rediss:// for TLS)`);
  }
  if (url.password) {
    throw new UserError(
      'the Redis URL holds a password: leave it out and name the variable holding it (execution.redisPasswordEnv, --redis-password-env)',
    );
  }
  return url;
}
