import { z } from 'zod';

import { canonicalJson } from '../canonical-json.js';
import type { EpisodeJobData } from './episode-job.js';
import type { QueueSecret } from './queue-secret.js';

/** The member of a job's data that holds its signature; the rest is what is signed. */
const SIGNATURE_MEMBER = 'signature';
/** The member of a job's data that says when and under which nonce the coordinator issued it. */
const ISSUE_MEMBER = 'issue';
const SIGNATURE_FORMAT = /^hmac-sha256:[0-9a-f]{64}$/;
/** Names what the signature is of, so that nothing else signed with the same secret passes for a job. */
const PURPOSE = 'mass episode job, version 2';
/** How far a worker's clock may be behind its coordinator's before a fresh job looks issued in the future. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * When the coordinator issued a job and until when it may start: a job is signed for one issue, recorded in the run
 * folder under its nonce, so a job taken from Redis after its time, or after the coordinator issued another for the
 * same step, is refused.
 */
export const JobIssue = z
  .object({
    nonce: z.string().regex(/^[0-9a-f]{32}$/, '32 hex digits'),
    issuedAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .strict();
export type JobIssue = z.infer<typeof JobIssue>;

/**
 * BullMQ's options of a job as it is added, less `jobId` (signed on its own): attempts, back-off, delay, priority,
 * order and what Redis keeps of it. They decide how often and when the job runs, so they are signed with its data.
 */
export type JobOptions = Record<string, unknown>;

/** A job's data as it is written into Redis: the episode job, its issue and its signature. */
export type SignedEpisodeJob = EpisodeJobData & { issue: JobIssue; signature: string };

/** What a worker reads of a job taken from Redis: BullMQ's id, name, data and options. */
export interface QueuedJob {
  id: string | undefined;
  name: string;
  data: unknown;
  opts: object;
}

export type JobVerdict =
  | { authentic: true; data: unknown; issue: JobIssue; options: JobOptions }
  | { authentic: false; reason: string };

/** What the coordinator signs: the job's id, BullMQ's name and options for it, its data and its issue. */
export interface UnsignedJob {
  jobId: string;
  name: string;
  data: EpisodeJobData;
  issue: JobIssue;
  /** BullMQ's options as the job is added with them (`jobId` may be among them). */
  options: object;
}

/**
 * The job's data with its issue and signature: HMAC-SHA256, under the secret the coordinator shares with its workers,
 * of the job's id, name, BullMQ options, data and issue as canonical JSON. Signed data cannot be added again under
 * another id, with other attempts, delay or priority, or after it expires.
 */
export function signEpisodeJob(secret: QueueSecret, job: UnsignedJob): SignedEpisodeJob {
  const text = signedText({ ...job, options: withoutJobId(job.options) });
  return { ...job.data, [ISSUE_MEMBER]: job.issue, [SIGNATURE_MEMBER]: `hmac-sha256:${secret.sign(text)}` };
}

/**
 * Whether a job taken from Redis was signed with this secret, with the options it has now, and may start at `now`;
 * if so its data without the issue and signature. Anything with access to Redis can write a job or change its
 * options; only a coordinator holding the secret can sign one.
 */
export function verifyEpisodeJob(secret: QueueSecret, job: QueuedJob, now = Date.now()): JobVerdict {
  const raw = job.data;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { authentic: false, reason: 'its data is not an object, so it carries no signature' };
  }
  const { [SIGNATURE_MEMBER]: signature, [ISSUE_MEMBER]: rawIssue, ...data } = raw as Record<string, unknown>;
  if (signature === undefined) {
    return {
      authentic: false,
      reason: 'it carries no signature: only a coordinator holding the queue’s secret adds jobs',
    };
  }
  if (typeof signature !== 'string' || !SIGNATURE_FORMAT.test(signature)) {
    return {
      authentic: false,
      reason: 'its signature is not an HMAC-SHA256 one (hmac-sha256:<64 hex digits>)',
    };
  }
  const issue = JobIssue.safeParse(rawIssue);
  if (!issue.success) {
    return {
      authentic: false,
      reason:
        'it carries no issue (nonce, issuedAt, expiresAt): it was signed by an older mass, or written by someone else',
    };
  }
  const options = withoutJobId(job.opts);
  let text: string;
  try {
    text = signedText({ jobId: job.id ?? '', name: job.name, data, issue: issue.data, options });
  } catch {
    return { authentic: false, reason: 'its data cannot be written as canonical JSON' };
  }
  if (!secret.verify(text, signature.slice('hmac-sha256:'.length))) {
    return {
      authentic: false,
      reason:
        'its signature does not match: it was not signed with this worker’s queue secret, or its data or BullMQ options (attempts, back-off, delay, priority) were changed after it was signed (a coordinator with another secret, or a job written or changed by someone else)',
    };
  }
  const expiry = issueTimeRefusal(issue.data, now);
  if (expiry !== null) return { authentic: false, reason: expiry };
  return { authentic: true, data, issue: issue.data, options };
}

/** Why a job of this issue may not start at `now` (expired, or issued in the future), or null. */
export function issueTimeRefusal(issue: JobIssue, now: number): string | null {
  const issuedAt = Date.parse(issue.issuedAt);
  const expiresAt = Date.parse(issue.expiresAt);
  if (!(expiresAt > issuedAt)) return 'its signature expires before it was issued';
  if (now > expiresAt) {
    return `its signature expired at ${issue.expiresAt} (issued ${issue.issuedAt}): a coordinator still waiting for it signs it again`;
  }
  if (issuedAt > now + CLOCK_SKEW_MS) {
    return `it was issued at ${issue.issuedAt}, in this worker's future: are the machines' clocks set?`;
  }
  return null;
}

/** Whether the job data `raw`, as found in Redis, bears the signature this coordinator gives `data`. */
export function sameSignature(raw: unknown, signed: SignedEpisodeJob): boolean {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    (raw as Record<string, unknown>)[SIGNATURE_MEMBER] === signed[SIGNATURE_MEMBER]
  );
}

function withoutJobId(options: object): JobOptions {
  const { jobId: _jobId, ...rest } = options as JobOptions;
  return rest;
}

function signedText(job: {
  jobId: string;
  name: string;
  data: unknown;
  issue: JobIssue;
  options: JobOptions;
}) {
  return canonicalJson({ purpose: PURPOSE, ...job });
}
