import { isAbsolute } from 'node:path';

import { z } from 'zod';

/** 90 days: a signature that lasts longer is hardly one that expires. */
export const MAX_JOB_LIFETIME_HOURS = 90 * 24;

/**
 * Where the run's episodes run: `local`, in the coordinator's process (the default); `queue`, on `mass worker`
 * processes on any machine, through BullMQ on Redis, one queue per model endpoint.
 */
export const Execution = z
  .object({
    backend: z.enum(['local', 'queue']).default('local'),
    redis: z
      .string()
      .regex(
        /^rediss?:\/\/[^@/]+(\/\d+)?\/?$/,
        'redis://host:port, without a password (see redisPasswordEnv)',
      )
      .optional()
      .describe('queue: the Redis every worker also uses, redis://host:port'),
    redisPasswordEnv: z
      .string()
      .min(1)
      .optional()
      .describe('the environment variable holding the Redis password'),
    secretFile: z
      .string()
      .refine(isAbsolute, 'an absolute path')
      .optional()
      .describe(
        "queue: the file (absolute path, mode 600) holding the secret the coordinator signs its jobs with, the workers' too; default: the MASS_QUEUE_SECRET environment variable. Never the secret itself",
      ),
    jobLifetimeHours: z
      .number()
      .positive()
      .max(MAX_JOB_LIFETIME_HOURS)
      .optional()
      .describe(
        'queue: how long a signed job may wait for a worker before workers refuse it (default 168, a week); a job still waiting at half of it is signed again',
      ),
  })
  .strict()
  .superRefine((execution, context) => {
    if (execution.backend === 'queue' && !execution.redis) {
      context.addIssue({
        code: 'custom',
        path: ['redis'],
        message: 'backend queue needs redis: redis://host:port, the Redis the workers (`mass worker`) use',
      });
    }
  });
export type Execution = z.output<typeof Execution>;
