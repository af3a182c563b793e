import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

import type { EpisodeOptions } from '../episode/run-episode.js';
import { UserError } from '../errors.js';
import { Workflow } from '../workflow/workflow.js';

/** This package's root: a task of its own suites travels as a path inside it, so workers may install it elsewhere. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const RelativePath = z
  .string()
  .min(1)
  .refine(
    (path) => !isAbsolute(path) && !normalize(path).split(sep).includes('..'),
    'a path inside its folder',
  );

/**
 * What a job carries: the episode's options less everything that must not or cannot travel (the API key, which the
 * worker reads from its own environment by `apiKeyEnv`; the log callback; the coordinator's own paths). Validated on
 * the worker, since anything with access to Redis can add a job.
 */
export const EpisodeJobData = z
  .object({
    schemaVersion: z.literal(1),
    kind: z.literal('episode-job'),
    /** The run's folder under the worker's `--runs` directory. */
    runName: z.string().regex(/^[A-Za-z0-9._-]+$/),
    stepKey: z.string().min(1),
    /** The episode directory inside the run directory (`episodes/<id>`). */
    episodeDir: RelativePath,
    task: z.union([
      z.object({ packagePath: RelativePath }).strict(),
      z.object({ absolutePath: z.string().refine(isAbsolute, 'an absolute path') }).strict(),
    ]),
    apiKeyEnv: z.string().min(1).optional(),
    options: z
      .object({
        workflow: Workflow.optional(),
        teacher: z.boolean().optional(),
        model: z.string().min(1),
        baseUrl: z.string().url(),
        seed: z.number().int(),
        dataSeed: z.number().int().optional(),
        timeoutSeconds: z.number().positive().optional(),
        cpuSeconds: z.number().positive().optional(),
        memoryBytes: z.number().positive().optional(),
        maxOutputTokens: z.number().int().positive().optional(),
        outputBudget: z.number().int().positive().optional(),
        sampling: z.record(z.string(), z.unknown()).optional(),
        contextWindowSize: z.number().int().positive().optional(),
        sandbox: z.enum(['bubblewrap', 'unsandboxed']).optional(),
        stopOnModelError: z.boolean().optional(),
        sandboxHide: z.array(z.string()).optional(),
        retry: z.record(z.string(), z.unknown()).optional(),
        singleAgent: z.boolean().optional(),
        harnessProfile: z.enum(['lean', 'stock']).optional(),
      })
      .strict(),
  })
  .strict();
export type EpisodeJobData = z.infer<typeof EpisodeJobData>;

/** What a worker returns: the episode is read from the shared run directory, so Redis holds only this. */
export const EpisodeJobResult = z.object({ worker: z.string(), episodeDir: z.string(), ran: z.boolean() });
export type EpisodeJobResult = z.infer<typeof EpisodeJobResult>;

/** The job of an episode of the run in `runDirectory`. */
export function episodeJobData(input: {
  runDirectory: string;
  stepKey: string;
  options: EpisodeOptions;
  apiKeyEnv?: string;
}): EpisodeJobData {
  const { options } = input;
  const runDirectory = resolve(input.runDirectory);
  const episodeDir = relative(runDirectory, resolve(options.outDir));
  const taskDir = resolve(options.taskDir);
  const packagePath = relative(PACKAGE_ROOT, taskDir);
  const {
    taskDir: _task,
    outDir: _out,
    apiKey: _key,
    log: _log,
    hiddenDirectories: _hidden,
    ...rest
  } = options;
  return EpisodeJobData.parse({
    schemaVersion: 1,
    kind: 'episode-job',
    runName: runDirectory.split(sep).pop(),
    stepKey: input.stepKey,
    episodeDir,
    task:
      packagePath.startsWith('..') || isAbsolute(packagePath) ? { absolutePath: taskDir } : { packagePath },
    ...(input.apiKeyEnv ? { apiKeyEnv: input.apiKeyEnv } : {}),
    options: JSON.parse(JSON.stringify(rest)) as unknown,
  });
}

/** Where the worker finds the job's task and run directory, and its options with the key from its own environment. */
export function episodeOptionsOnWorker(
  job: EpisodeJobData,
  runsDirectory: string,
): { runDirectory: string; episodeDir: string; options: Omit<EpisodeOptions, 'outDir'> } {
  const runDirectory = join(resolve(runsDirectory), job.runName);
  const apiKey = job.apiKeyEnv ? process.env[job.apiKeyEnv] : undefined;
  if (job.apiKeyEnv && !apiKey) {
    throw new UserError(
      `${job.apiKeyEnv} is not set on this worker: it must hold the key of ${job.options.baseUrl}`,
    );
  }
  const taskDir =
    'packagePath' in job.task ? join(PACKAGE_ROOT, job.task.packagePath) : job.task.absolutePath;
  return {
    runDirectory,
    episodeDir: join(runDirectory, job.episodeDir),
    options: {
      ...(job.options as Omit<EpisodeOptions, 'outDir' | 'taskDir'>),
      taskDir,
      ...(apiKey ? { apiKey } : {}),
    },
  };
}
