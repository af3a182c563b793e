import { canonicalJson } from '../canonical-json.js';
import type { EpisodeJobData } from './episode-job.js';
import type { QueueSecret } from './queue-secret.js';

/** The member of a job's data that holds its signature; the rest is what is signed. */
const SIGNATURE_MEMBER = 'signature';
const SIGNATURE_FORMAT = /^hmac-sha256:[0-9a-f]{64}$/;
/** Names what the signature is of, so that nothing else signed with the same secret passes for a job. */
const PURPOSE = 'mass episode job';

/** A job's data as it is written into Redis: the episode job and its signature. */
export type SignedEpisodeJob = EpisodeJobData & { signature: string };

export type JobVerdict = { authentic: true; data: unknown } | { authentic: false; reason: string };

/**
 * The job with its signature: HMAC-SHA256, under the secret the coordinator shares with its workers, of the job's id
 * and its data as canonical JSON. The id is signed too, so signed data cannot be added again under another id.
 */
export function signEpisodeJob(secret: QueueSecret, jobId: string, data: EpisodeJobData): SignedEpisodeJob {
  return { ...data, [SIGNATURE_MEMBER]: `hmac-sha256:${secret.sign(signedText(jobId, data))}` };
}

/**
 * Whether a job taken from Redis was signed with this secret, and if so its data without the signature. Anything
 * with access to Redis can write a job; only a coordinator holding the secret can sign one.
 */
export function verifyEpisodeJob(secret: QueueSecret, jobId: string | undefined, raw: unknown): JobVerdict {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { authentic: false, reason: 'its data is not an object, so it carries no signature' };
  }
  const { [SIGNATURE_MEMBER]: signature, ...data } = raw as Record<string, unknown>;
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
  let text: string;
  try {
    text = signedText(jobId ?? '', data);
  } catch {
    return { authentic: false, reason: 'its data cannot be written as canonical JSON' };
  }
  if (!secret.verify(text, signature.slice('hmac-sha256:'.length))) {
    return {
      authentic: false,
      reason:
        'its signature does not match: it was not signed with this worker’s queue secret (a coordinator with another secret, or a job written or changed by someone else)',
    };
  }
  return { authentic: true, data };
}

/** Whether the job data `raw`, as found in Redis, bears the signature this coordinator gives `data`. */
export function sameSignature(raw: unknown, signed: SignedEpisodeJob): boolean {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    (raw as Record<string, unknown>)[SIGNATURE_MEMBER] === signed[SIGNATURE_MEMBER]
  );
}

function signedText(jobId: string, data: unknown): string {
  return canonicalJson({ purpose: PURPOSE, jobId, data });
}
