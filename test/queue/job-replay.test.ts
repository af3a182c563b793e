import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { issuedJobFolder, issueJob, reusableIssue, startIssuedJob } from '../../src/queue/issued-jobs.js';
import { canonicalJson } from '../../src/canonical-json.js';
import {
  signEpisodeJob,
  verifyEpisodeJob,
  type JobIssue,
  type QueuedJob,
} from '../../src/queue/job-signature.js';
import { scheduleRefusal } from '../../src/queue/worker-policy.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { job as episodeJob, policy as workerPolicy, secret, STEP_KEY } from './queue-fixtures.js';

/**
 * A signed job copied out of Redis and added again: with other BullMQ options, after its signature expired, after it
 * finished, or never issued by its coordinator. The same against a real Redis and worker is in
 * worker-refusals.e2e.test.ts.
 */
const JOB_ID = 'episode.my-run.1';
const HOUR = 3600 * 1000;
const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const data = episodeJob();

/** BullMQ's options as the coordinator adds every job with them. */
const options = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 5000 },
  removeOnComplete: false,
  removeOnFail: false,
};

const issue: JobIssue = {
  nonce: 'b'.repeat(32),
  issuedAt: new Date(NOW).toISOString(),
  expiresAt: new Date(NOW + 7 * 24 * HOUR).toISOString(),
};

/** The job as a worker takes it from Redis: the signed data, and BullMQ's options with the id among them. */
const queued = (changes: Partial<QueuedJob> = {}): QueuedJob => ({
  id: JOB_ID,
  name: 'episode',
  data: JSON.parse(
    JSON.stringify(signEpisodeJob(secret, { jobId: JOB_ID, name: 'episode', data, issue, options })),
  ),
  opts: { ...options, jobId: JOB_ID },
  ...changes,
});

const refusal = (job: QueuedJob, now = NOW + HOUR): string => {
  const verdict = verifyEpisodeJob(secret, job, now);
  return verdict.authentic ? 'authentic' : verdict.reason;
};

describe('what a job’s signature covers', () => {
  it('is its id, name, data, issue and BullMQ options, as canonical JSON', () => {
    expect(verifyEpisodeJob(secret, queued(), NOW + HOUR)).toEqual({
      authentic: true,
      data,
      issue,
      options,
    });
    // The options as Redis gives them back, in another order: the same signature.
    const reordered = { removeOnFail: false, backoff: { delay: 5000, type: 'exponential' }, jobId: JOB_ID };
    expect(refusal(queued({ opts: { ...reordered, removeOnComplete: false, attempts: 3 } }))).toBe(
      'authentic',
    );
    // What is signed, independently: HMAC-SHA256 of the canonical JSON of these members.
    const text = canonicalJson({
      purpose: 'mass episode job, version 2',
      jobId: JOB_ID,
      name: 'episode',
      data,
      issue,
      options,
    });
    expect((queued().data as { signature: string }).signature).toBe(`hmac-sha256:${secret.sign(text)}`);
  });

  it('fails when the job is added again with other attempts, delay, priority, order or back-off', () => {
    const changed = (opts: object) => refusal(queued({ opts: { ...options, jobId: JOB_ID, ...opts } }));
    expect(changed({ attempts: 500 })).toMatch(/signature does not match.*BullMQ options/);
    expect(changed({ delay: 60_000 })).toMatch(/does not match/);
    expect(changed({ priority: 1 })).toMatch(/does not match/);
    expect(changed({ lifo: true })).toMatch(/does not match/);
    expect(changed({ backoff: { type: 'fixed', delay: 0 } })).toMatch(/does not match/);
    expect(changed({ removeOnComplete: true })).toMatch(/does not match/);
    expect(changed({ deduplication: { id: 'x' } })).toMatch(/does not match/);
    expect(refusal(queued({ name: 'other' }))).toMatch(/does not match/);
  });

  it('fails when its issue is changed, is missing, has expired, or lies in the future', () => {
    const signed = queued().data as Record<string, unknown>;
    const later = { ...issue, expiresAt: new Date(NOW + 700 * 24 * HOUR).toISOString() };
    expect(refusal(queued({ data: { ...signed, issue: later } }))).toMatch(/does not match/);
    expect(refusal(queued({ data: { ...signed, issue: { ...issue, nonce: 'c'.repeat(32) } } }))).toMatch(
      /does not match/,
    );
    const { issue: _issue, ...withoutIssue } = signed;
    expect(refusal(queued({ data: withoutIssue }))).toMatch(/carries no issue/);
    expect(refusal(queued(), NOW + 8 * 24 * HOUR)).toMatch(
      /signature expired at 2025-06-08T12:00:00.000Z \(issued 2025-06-01T12:00:00.000Z\)/,
    );
    expect(refusal(queued(), NOW - HOUR)).toMatch(/in this worker's future: are the machines' clocks set/);
    // A few minutes of clock difference between coordinator and worker are no reason to refuse.
    expect(refusal(queued(), NOW - 60_000)).toBe('authentic');
  });
});

describe('what a worker’s flags allow of a job’s options', () => {
  const policy = workerPolicy({ maxDelayMs: 60_000 });

  it('refuses more attempts, a longer delay or a longer back-off than --max-attempts and --max-delay', () => {
    expect(scheduleRefusal(policy, options)).toBeNull();
    expect(scheduleRefusal(policy, { ...options, attempts: 500 })).toBe(
      'it asks for 500 attempts, more than this worker allows (--max-attempts 5)',
    );
    // 5 s doubled from the first retry on: 5, 10, 20 and 40 s.
    expect(scheduleRefusal(policy, { ...options, attempts: 5 })).toBeNull();
    expect(scheduleRefusal({ ...policy, maxDelayMs: 30_000 }, { ...options, attempts: 5 })).toBe(
      'its back-off waits up to 40 s between attempts, longer than this worker allows (--max-delay 30 s)',
    );
    expect(scheduleRefusal(policy, { ...options, delay: 3_600_000 })).toBe(
      'it asks to wait 3600 s before it starts, longer than this worker allows (--max-delay 60 s)',
    );
    expect(scheduleRefusal(policy, { attempts: 2, backoff: 90_000 })).toMatch(/waits up to 90 s/);
    expect(scheduleRefusal(policy, { attempts: 2, backoff: { type: 'custom', delay: 1 } })).toMatch(
      /back-off "custom" is not one this worker knows/,
    );
    expect(scheduleRefusal(policy, { attempts: 'many' })).toMatch(/attempts are not a whole number/);
  });
});

describe('the jobs a coordinator issued, as its workers check them', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let run: string;
  const job = { jobId: JOB_ID, stepKey: STEP_KEY, lifetimeMs: 7 * 24 * HOUR };
  beforeEach(() => {
    directory = temporaryDirectory();
    run = join(directory.path, 'my-run');
    mkdirSync(run);
  });
  afterEach(() => directory.remove());

  const start = (started: JobIssue, maxStarts = 4) =>
    startIssuedJob(run, { jobId: JOB_ID, stepKey: STEP_KEY, issue: started, maxStarts });

  it('runs an issued job to its finish once: the same job added again afterwards is refused', async () => {
    const issued = await issueJob(run, { ...job, now: NOW });
    const first = await start(issued);
    // A second attempt (the first worker lost its lock): whichever finishes first stands, the other is discarded.
    const second = await start(issued);
    expect([first.start, second.start]).toEqual([1, 2]);
    expect(await first.finish('w1')).toBe(true);
    expect(await second.finish('w2')).toBe(false);
    await expect(start(issued)).rejects.toThrow(
      /already ran to the end \(finished by worker w1 at .*\): a finished job added again to Redis is not run twice/,
    );
  });

  it('refuses a job its coordinator never issued, one issued for another step, and one superseded', async () => {
    await expect(start(issue)).rejects.toThrow(
      /its coordinator never issued it: no queue\/episode\.my-run\.1\/issued\.json/,
    );
    const issued = await issueJob(run, { ...job, now: NOW });
    await expect(start(issue)).rejects.toThrow(/not the job its coordinator issued for this step/);
    await expect(
      startIssuedJob(run, { jobId: JOB_ID, stepKey: 'other/step', issue: issued, maxStarts: 4 }),
    ).rejects.toThrow(/issued episode\.my-run\.1 for another step, search\/L0/);

    // Issued anew (its episode deleted to be redone): the earlier issue's job no longer runs, nor finishes.
    const running = await start(issued);
    const again = await issueJob(run, { ...job, now: NOW + HOUR });
    await expect(start(issued)).rejects.toThrow(/not the job its coordinator issued/);
    expect(await running.finish('w1')).toBe(false);
    expect((await start(again)).start).toBe(1);
    expect(readdirSync(issuedJobFolder(run, JOB_ID)).sort()).toEqual([again.nonce, 'issued.json']);
  });

  it('counts the starts of an issue: a job whose attempts are reset in Redis runs no more than it was signed for', async () => {
    const issued = await issueJob(run, { ...job, now: NOW });
    for (const expected of [1, 2, 3]) expect((await start(issued, 3)).start).toBe(expected);
    await expect(start(issued, 3)).rejects.toThrow(/started 3 times already/);
  });

  it('follows no link in the run folder', async () => {
    const elsewhere = join(directory.path, 'elsewhere');
    mkdirSync(join(elsewhere, JOB_ID), { recursive: true });
    symlinkSync(elsewhere, join(run, 'queue'));
    await expect(start(issue)).rejects.toThrow(/queue is not a folder \(a link\?\)/);
  });

  it('keeps an issue for a coordinator started again while half its lifetime is left and the job unfinished', async () => {
    const issued = await issueJob(run, { ...job, now: NOW });
    expect(await reusableIssue(run, { ...job, now: NOW + HOUR })).toEqual(issued);
    expect(await reusableIssue(run, { ...job, stepKey: 'other/step', now: NOW })).toBeUndefined();
    expect(await reusableIssue(run, { ...job, now: NOW + 4 * 24 * HOUR })).toBeUndefined();
    await (await start(issued)).finish('w1');
    expect(await reusableIssue(run, { ...job, now: NOW + HOUR })).toBeUndefined();
    // Issued under a week's lifetime, now configured to a day: issued anew.
    const weekLong = await issueJob(run, { ...job, now: NOW });
    expect(await reusableIssue(run, { ...job, now: NOW })).toEqual(weekLong);
    expect(await reusableIssue(run, { ...job, lifetimeMs: 24 * HOUR, now: NOW })).toBeUndefined();
    // A damaged record is none: the coordinator issues the job anew over it.
    writeFileSync(
      join(issuedJobFolder(run, JOB_ID), 'issued.json'),
      '{"schemaVersion": 1, "kind": "issued-job"',
    );
    expect(await reusableIssue(run, { ...job, now: NOW })).toBeUndefined();
    rmSync(join(run, 'queue'), { recursive: true });
    expect(await reusableIssue(run, { ...job, now: NOW })).toBeUndefined();
    expect(existsSync(join(run, 'queue'))).toBe(false);
  });
});
