import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { temporaryPathFor } from '../store/atomic-write.js';
import { defineRecord, type RecordDefinition } from '../store/record.js';
import { runFiles } from '../store/run-paths.js';
import { systemErrorCode } from '../store/system-error-code.js';
import { JobIssue } from './job-signature.js';

/**
 * The coordinator's account of the jobs it issued, in the run folder the workers share: `queue/<job id>/issued.json`
 * names the one issue (nonce, issued, expires) of each step's job that may run, and under `queue/<job id>/<nonce>/`
 * the workers record each start (`start-<n>`) and the one finish (`finished.json`), each created only if absent.
 * Redis is anyone's to write; this folder is the coordinator's and its workers', so a job replayed from Redis finds
 * its issue superseded, finished, or out of starts. `mass.db` cannot serve: it stays on the coordinator's local disk.
 */
export const IssuedJob = defineRecord({
  kind: 'issued-job',
  version: 1,
  schema: z.object({ jobId: z.string(), stepKey: z.string(), issue: JobIssue }).strict(),
});
export type IssuedJob = z.infer<typeof IssuedJob.schema>;

/** The one finish of an issued job: which worker ran it to the end, and when. */
const JobFinish = defineRecord({
  kind: 'job-finish',
  version: 1,
  schema: z.object({ worker: z.string(), finishedAt: z.iso.datetime() }).strict(),
});

const ISSUED_FILE = 'issued.json';
const FINISHED_FILE = 'finished.json';

/** `queue/<job id>` of the run, where the job's issue and its starts and finish are recorded. */
export function issuedJobFolder(runDirectory: string, jobId: string): string {
  return join(runDirectory, runFiles.queue, jobId);
}

/**
 * The issue recorded for the job, kept while its job may still be waiting in Redis: a coordinator started again signs
 * the same job, which Redis then ignores. None when none is recorded for this step, its job finished, or less than
 * half its lifetime is left (a job about to expire in the queue is issued anew).
 */
export async function reusableIssue(
  runDirectory: string,
  job: { jobId: string; stepKey: string; lifetimeMs: number; now: number },
): Promise<JobIssue | undefined> {
  const folder = issuedJobFolder(runDirectory, job.jobId);
  const recorded = await readOrNone(IssuedJob, join(folder, ISSUED_FILE));
  if (!recorded || recorded.stepKey !== job.stepKey) return undefined;
  const expiresAt = Date.parse(recorded.issue.expiresAt);
  // Issued under a longer lifetime than the configuration's now: issued anew, under the configured one.
  if (expiresAt - Date.parse(recorded.issue.issuedAt) > job.lifetimeMs) return undefined;
  if (expiresAt - job.now < job.lifetimeMs / 2) return undefined;
  if (await readOrNone(JobFinish, join(folder, recorded.issue.nonce, FINISHED_FILE))) return undefined;
  return recorded.issue;
}

/** The issue recorded for the job now, if any (a job running on a worker keeps it). */
export async function recordedIssue(runDirectory: string, jobId: string): Promise<JobIssue | undefined> {
  return (await readOrNone(IssuedJob, join(issuedJobFolder(runDirectory, jobId), ISSUED_FILE)))?.issue;
}

/** The coordinator's read of a record: a damaged one counts as none, and the job is issued anew over it. */
async function readOrNone<Schema extends z.ZodObject>(
  record: RecordDefinition<Schema>,
  path: string,
): Promise<z.output<Schema> | undefined> {
  try {
    return await record.readIfPresent(path);
  } catch (error) {
    if (error instanceof UserError) return undefined;
    throw error;
  }
}

/**
 * A new issue of the step's job, recorded before the job is added: from now on only a job signed with this nonce
 * runs, and what earlier issues' workers recorded is removed.
 */
export async function issueJob(
  runDirectory: string,
  job: { jobId: string; stepKey: string; lifetimeMs: number; now: number },
): Promise<JobIssue> {
  const issue: JobIssue = {
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date(job.now).toISOString(),
    expiresAt: new Date(job.now + job.lifetimeMs).toISOString(),
  };
  const folder = issuedJobFolder(runDirectory, job.jobId);
  await IssuedJob.write(join(folder, ISSUED_FILE), { jobId: job.jobId, stepKey: job.stepKey, issue });
  for (const entry of await readdir(folder)) {
    if (entry !== ISSUED_FILE && entry !== issue.nonce && !entry.startsWith('.')) {
      await rm(join(folder, entry), { recursive: true, force: true });
    }
  }
  return issue;
}

/** A worker's start of an issued job: `finish` records that it ran to the end, once for all its attempts. */
export interface IssuedJobStart {
  /** The start's number among the issue's, from 1. */
  start: number;
  /**
   * Records the finish, unless another attempt finished first or the coordinator has issued the step's job anew since:
   * then false, and this attempt's episode is discarded.
   */
  finish(worker: string): Promise<boolean>;
}

/**
 * Records a start of the job on a worker, refused (a `UserError` naming why) unless the coordinator issued this job
 * under this nonce for this step, it has not finished, and fewer than `maxStarts` starts are recorded: a job read from
 * Redis and added again, after its episode is gone or with its attempts reset, does not run again.
 */
export async function startIssuedJob(
  runDirectory: string,
  job: { jobId: string; stepKey: string; issue: JobIssue; maxStarts: number },
): Promise<IssuedJobStart> {
  const folder = issuedJobFolder(runDirectory, job.jobId);
  const recorded =
    (await isRealFolder(join(runDirectory, runFiles.queue))) && (await isRealFolder(folder))
      ? await IssuedJob.readIfPresent(join(folder, ISSUED_FILE))
      : undefined;
  if (!recorded) {
    throw new UserError(
      `its coordinator never issued it: no ${join(runFiles.queue, job.jobId, ISSUED_FILE)} in the run folder`,
    );
  }
  if (recorded.stepKey !== job.stepKey) {
    throw new UserError(`its coordinator issued ${job.jobId} for another step, ${recorded.stepKey}`);
  }
  if (recorded.issue.nonce !== job.issue.nonce) {
    throw new UserError(
      `it is not the job its coordinator issued for this step: that one was issued ${recorded.issue.issuedAt} (this one ${job.issue.issuedAt}); an old job added again`,
    );
  }
  const attemptFolder = join(folder, job.issue.nonce);
  await mkdir(attemptFolder).catch((error: unknown) => {
    if (systemErrorCode(error) !== 'EEXIST') throw error;
  });
  if (!(await isRealFolder(attemptFolder))) throw new SystemError(`${attemptFolder} vanished as it was made`);
  const finished = await JobFinish.readIfPresent(join(attemptFolder, FINISHED_FILE));
  if (finished !== undefined) {
    throw new UserError(
      `it already ran to the end (finished by worker ${finished.worker} at ${finished.finishedAt}): a finished job added again to Redis is not run twice`,
    );
  }
  for (let start = 1; start <= job.maxStarts; start++) {
    if (!(await createOnce(join(attemptFolder, `start-${start}`), new Date().toISOString()))) continue;
    return {
      start,
      finish: async (worker) => {
        const current = await recordedIssue(runDirectory, job.jobId).catch(() => undefined);
        if (current?.nonce !== job.issue.nonce) return false;
        const record = JobFinish.serialize({ worker, finishedAt: new Date().toISOString() });
        try {
          return await createOnce(join(attemptFolder, FINISHED_FILE), record);
        } catch (error) {
          // The coordinator issued the step's job anew meanwhile, removing this issue's folder.
          if (systemErrorCode(error) === 'ENOENT') return false;
          throw error;
        }
      },
    };
  }
  throw new UserError(
    `it was started ${job.maxStarts} times already, all its signed attempts and stalls allow: a job retried in Redis is not run again`,
  );
}

/**
 * Creates the file with `text` unless it exists, whole or not at all: written aside, then hard-linked into place, which
 * fails if the name is taken (atomic on local and network file systems alike), so two workers never both create it.
 * Whether it did.
 */
async function createOnce(path: string, text: string): Promise<boolean> {
  const aside = temporaryPathFor(path);
  await writeFile(aside, text, { flag: 'wx', mode: 0o644 });
  try {
    await link(aside, path);
    return true;
  } catch (error) {
    if (systemErrorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(aside, { force: true });
  }
}

/**
 * Whether the path is a folder, refused when it is something else: a link there could lead the worker's reads and
 * writes out of the run folder.
 */
async function isRealFolder(path: string): Promise<boolean> {
  let stat;
  try {
    stat = await lstat(path);
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return false;
    throw error;
  }
  if (!stat.isDirectory()) throw new UserError(`${path} is not a folder (a link?)`);
  return true;
}
