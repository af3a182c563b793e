import { isAbsolute, normalize, relative, resolve, sep } from 'node:path';

import { z } from 'zod';

import { EpisodeSpec, type EpisodeOptions } from '../episode/episode-spec.js';
import { UserError } from '../errors.js';
import { replicaAddresses } from '../model/replicas.js';
import { runFiles } from '../store/run-paths.js';
import { locateJobOnWorker, PACKAGE_ROOT, type WorkerFolders } from './job-location.js';

/** A folder's name in a job's paths: no `.`, `..` or hidden name (`.staging` is the workers' own). */
const FOLDER_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

const RelativePath = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (path) => !isAbsolute(path) && !normalize(path).split(sep).includes('..'),
    'a path inside its folder',
  );

/** `<…>/episodes/<id>` inside the run, of plain folder names: a job cannot name a run's other files (`mass.db`). */
const EpisodeDirectory = z
  .string()
  .max(4096)
  .refine((path) => {
    const folders = path.split('/');
    return (
      folders.length >= 2 &&
      folders.at(-2) === runFiles.episodes &&
      folders.every((name) => FOLDER_NAME.test(name))
    );
  }, 'a folder <…>/episodes/<id> inside the run, of letters, digits, ".", "_" and "-" (no name starting with ".")');

const AbsolutePath = z
  .string()
  .max(4096)
  .refine((path) => isAbsolute(path) && normalize(path) === path, 'an absolute path without "." or ".."');

/**
 * What a job carries: the episode's specification (`EpisodeSpec`), never what stays in the coordinator's process
 * (`EpisodeLocal`: the API key, which the worker reads from its own environment by `apiKeyEnv`; the log callback; the
 * coordinator's own paths). Validated on the worker, field by field, since a job names what the worker will run, read
 * and write: its text must not reach outside the run folder, the allowed suites, or the harness's command line; the
 * job adds only the rules of its paths.
 */
export const EpisodeJobData = z
  .object({
    schemaVersion: z.literal(1),
    kind: z.literal('episode-job'),
    /** The run's folder under the worker's `--runs` directory. */
    runName: z.string().regex(FOLDER_NAME, 'a folder name (no "." or ".." or hidden name)'),
    stepKey: z.string().min(1).max(1000),
    /** The episode directory inside the run directory (`episodes/<id>`). */
    episodeDir: EpisodeDirectory,
    task: z.union([
      z.object({ packagePath: RelativePath }).strict(),
      z.object({ absolutePath: AbsolutePath }).strict(),
    ]),
    /** The name of the worker's variable holding the key: a name, never a key. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable’s name')
      .optional(),
    /**
     * Further addresses of the model at `options.baseUrl` (`roles.<role>.replicas`): the worker spreads the episode's
     * calls over them as the coordinator would, each one allowed by its `--endpoint` list.
     */
    replicas: z.array(EpisodeSpec.shape.baseUrl).max(64).optional(),
    // The episode's specification, its host paths held to absolute ones.
    options: EpisodeSpec.extend({ sandboxHide: z.array(AbsolutePath).max(256).optional() }).strict(),
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
    gpuPool: _gpuPool,
    ...rest
  } = options;
  const replicas = replicaAddresses(options.baseUrl).slice(1);
  return EpisodeJobData.parse({
    schemaVersion: 1,
    kind: 'episode-job',
    runName: runDirectory.split(sep).pop(),
    stepKey: input.stepKey,
    episodeDir,
    task:
      packagePath.startsWith('..') || isAbsolute(packagePath) ? { absolutePath: taskDir } : { packagePath },
    ...(input.apiKeyEnv ? { apiKeyEnv: input.apiKeyEnv } : {}),
    ...(replicas.length > 0 ? { replicas } : {}),
    options: JSON.parse(JSON.stringify(rest)) as unknown,
  });
}

/**
 * Where the worker finds the job's task and run directory (checked by `locateJobOnWorker`), and its options with the
 * key from its own environment.
 */
export function episodeOptionsOnWorker(
  job: EpisodeJobData,
  folders: WorkerFolders,
): { runDirectory: string; episodeDir: string; options: Omit<EpisodeOptions, 'outDir'> } {
  const { runDirectory, episodeDir, taskDir } = locateJobOnWorker(job, folders);
  const apiKey = job.apiKeyEnv ? process.env[job.apiKeyEnv] : undefined;
  if (job.apiKeyEnv && !apiKey) {
    throw new UserError(
      `${job.apiKeyEnv} is not set on this worker: it must hold the key of ${job.options.baseUrl}`,
    );
  }
  return {
    runDirectory,
    episodeDir,
    options: {
      ...job.options,
      taskDir,
      ...(apiKey ? { apiKey } : {}),
    },
  };
}
