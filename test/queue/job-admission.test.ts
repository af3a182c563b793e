import { chmodSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { Execution } from '../../src/config/execution.js';
import { declareReplicas } from '../../src/model/replicas.js';
import { EpisodeJobData } from '../../src/queue/episode-job.js';
import { locateJobOnWorker } from '../../src/queue/job-location.js';
import { signEpisodeJob, verifyEpisodeJob } from '../../src/queue/job-signature.js';
import { printableText } from '../../src/queue/printable-text.js';
import { QUEUE_SECRET_VARIABLE, QueueSecret, readQueueSecret } from '../../src/queue/queue-secret.js';
import { parseAllowedEndpoint, policyRefusal } from '../../src/queue/worker-policy.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { job, policy, secret, taskDir } from './queue-fixtures.js';

/**
 * What a worker checks of a job before anything of it runs: its signature, its form field by field, what the worker's
 * command line allows, and where its files are. The same checks against a real Redis and worker are in
 * worker-refusals.e2e.test.ts.
 */
describe('a job’s signature', () => {
  it('covers its data and its id; a job without one, or changed, or moved to another id, is not authentic', () => {
    const data = job();
    const issue = {
      nonce: 'a'.repeat(32),
      issuedAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
    const options = { attempts: 3 };
    const sign = (jobId: string, key = secret) =>
      signEpisodeJob(key, { jobId, name: 'episode', data, issue, options });
    const signed = sign('episode.my-run.1');
    const queued = (id: string, raw: unknown) => ({ id, name: 'episode', data: raw, opts: options });
    expect(verifyEpisodeJob(secret, queued('episode.my-run.1', JSON.parse(JSON.stringify(signed))))).toEqual({
      authentic: true,
      data,
      issue,
      options,
    });
    const refusal = (id: string, raw: unknown) => {
      const verdict = verifyEpisodeJob(secret, queued(id, raw));
      return verdict.authentic ? 'authentic' : verdict.reason;
    };
    expect(refusal('episode.my-run.1', data)).toMatch(/carries no signature/);
    expect(refusal('episode.my-run.1', { ...signed, signature: 'hmac-sha256:00' })).toMatch(
      /not an HMAC-SHA256/,
    );
    expect(
      refusal('episode.my-run.1', { ...signed, options: { ...signed.options, sandbox: 'unsandboxed' } }),
    ).toMatch(/does not match/);
    expect(refusal('episode.my-run.2', signed)).toMatch(/does not match/);
    expect(refusal('episode.my-run.1', sign('episode.my-run.1', new QueueSecret('x'.repeat(40))))).toMatch(
      /does not match/,
    );
    expect(refusal('episode.my-run.1', 'a string')).toMatch(/not an object/);
  });

  it('is made with a secret that never prints', () => {
    expect(`${secret}`).toBe('[queue secret]');
    expect(JSON.stringify({ secret })).toBe('{"secret":"[queue secret]"}');
  });
});

describe('the queue’s secret', () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());
  afterEach(() => {
    delete process.env[QUEUE_SECRET_VARIABLE];
  });

  it('is read from a file only its owner can read, or from MASS_QUEUE_SECRET, which then leaves the environment', () => {
    const file = join(directory.path, 'secret');
    writeFileSync(file, 'f'.repeat(64) + '\n');
    chmodSync(file, 0o644);
    const source = { file, fileSetting: '--secret-file' };
    expect(() => readQueueSecret(source)).toThrow(/others can read it \(mode 644\); chmod 600/);
    chmodSync(file, 0o600);
    expect(readQueueSecret(source).sign('x')).toBe(new QueueSecret('f'.repeat(64)).sign('x'));
    writeFileSync(file, 'short');
    expect(() => readQueueSecret(source)).toThrow(/5 characters; use at least 32/);
    expect(() => readQueueSecret({ file: 'relative', fileSetting: '--secret-file' })).toThrow(
      /absolute path/,
    );
    expect(() =>
      readQueueSecret({ file: join(directory.path, 'absent'), fileSetting: '--secret-file' }),
    ).toThrow(/--secret-file .*absent: cannot read it \(ENOENT\)/);

    expect(() => readQueueSecret({ fileSetting: 'execution.secretFile' })).toThrow(
      /needs a secret shared by the coordinator and its workers.*export MASS_QUEUE_SECRET=.*execution\.secretFile/,
    );
    process.env[QUEUE_SECRET_VARIABLE] = 'e'.repeat(40);
    const fromVariable = readQueueSecret({ fileSetting: 'execution.secretFile' });
    expect(process.env[QUEUE_SECRET_VARIABLE]).toBeUndefined();
    expect(readQueueSecret({ fileSetting: 'execution.secretFile' })).toBe(fromVariable);
  });

  it('is named in the configuration by an absolute path, never given there', () => {
    const queue = { backend: 'queue', redis: 'redis://queue:6379' };
    expect(Execution.safeParse({ ...queue, secretFile: 'secret.txt' }).success).toBe(false);
    expect(Execution.safeParse({ ...queue, secret: 'f'.repeat(64) }).success).toBe(false);
    expect(Execution.parse({ ...queue, secretFile: '/etc/mass/queue-secret' }).secretFile).toBe(
      '/etc/mass/queue-secret',
    );
  });
});

describe('a job’s form', () => {
  const refused = (change: (data: EpisodeJobData) => unknown) =>
    !EpisodeJobData.safeParse(change(structuredClone(job()))).success;

  it('keeps every path inside the run and the harness’s command line its own', () => {
    expect(refused((data) => ({ ...data, runName: '..' }))).toBe(true);
    expect(refused((data) => ({ ...data, runName: '.hidden' }))).toBe(true);
    expect(refused((data) => ({ ...data, episodeDir: 'mass.db' }))).toBe(true);
    expect(refused((data) => ({ ...data, episodeDir: 'episodes/.staging' }))).toBe(true);
    expect(refused((data) => ({ ...data, episodeDir: 'episodes/a/../../x' }))).toBe(true);
    expect(refused((data) => ({ ...data, task: { absolutePath: '/suites/../etc' } }))).toBe(true);
    expect(refused((data) => ({ ...data, apiKeyEnv: 'PATH=x' }))).toBe(true);
    expect(refused((data) => ({ ...data, options: { ...data.options, model: '--yolo' } }))).toBe(true);
    expect(
      refused((data) => ({ ...data, options: { ...data.options, baseUrl: 'file:///etc/passwd' } })),
    ).toBe(true);
    expect(refused((data) => ({ ...data, options: { ...data.options, sandboxHide: ['relative'] } }))).toBe(
      true,
    );
    expect(refused((data) => ({ ...data, options: { ...data.options, sampling: { stop: ['x'] } } }))).toBe(
      true,
    );
    expect(refused((data) => ({ ...data, options: { ...data.options, retry: { anything: 1 } } }))).toBe(true);
    expect(refused((data) => data)).toBe(false);
    expect(refused(() => ({ ...job(), episodeDir: 'evaluation/default/episodes/m-tiny-sum-full-0' }))).toBe(
      false,
    );
  });
});

describe('what a worker allows', () => {
  it('refuses an unsandboxed run, a key variable and an endpoint its command line did not name', () => {
    expect(policyRefusal(policy(), job())).toBeNull();
    expect(policyRefusal(policy(), job({ sandbox: 'unsandboxed' }))).toMatch(/--allow-unsandboxed/);
    expect(policyRefusal(policy({ allowUnsandboxed: true }), job({ sandbox: 'unsandboxed' }))).toBeNull();
    expect(policyRefusal(policy(), job({}, 'HOME'))).toMatch(/key in HOME.*--api-key-env: none/);
    expect(policyRefusal(policy({ apiKeyVariables: ['GPU_KEY'] }), job({}, 'GPU_KEY'))).toBeNull();
    expect(policyRefusal(policy(), job({ baseUrl: 'http://attacker:8000/v1' }))).toMatch(
      /attacker:8000 is not one this worker serves \(--allow-endpoint: gpu-1:8000\)/,
    );
    expect(policyRefusal(policy(), job({ baseUrl: 'http://gpu-1:9000/v1' }))).toMatch(
      /not one this worker serves/,
    );
    expect(policyRefusal(policy(), job({ baseUrl: 'http://user:pw@gpu-1:8000/v1' }))).toMatch(/credentials/);
    const anyPort = policy({ endpoints: [parseAllowedEndpoint('GPU-1')] });
    expect(policyRefusal(anyPort, job({ baseUrl: 'https://gpu-1/v1' }))).toBeNull();
    expect(parseAllowedEndpoint('[::1]:8000')).toEqual({ host: '[::1]', port: '8000' });
    expect(() => parseAllowedEndpoint('http://gpu-1:8000/v1')).toThrow(/host, or host:port/);
    expect(() => parseAllowedEndpoint('gpu-1:0')).toThrow(/ports run from 1 to 65535/);
  });

  it("carries the endpoint's replicas to the worker, each one allowed by its --allow-endpoint list", () => {
    expect(job().replicas).toBeUndefined();
    declareReplicas('http://gpu-1:8000/v1', ['http://gpu-2:8000/v1/']);
    try {
      const replicated = job();
      expect(replicated.replicas).toEqual(['http://gpu-2:8000/v1']);
      expect(EpisodeJobData.parse(JSON.parse(JSON.stringify(replicated)))).toEqual(replicated);
      expect(policyRefusal(policy(), replicated)).toMatch(/gpu-2:8000 is not one this worker serves/);
      const both = policy({
        endpoints: [parseAllowedEndpoint('gpu-1:8000'), parseAllowedEndpoint('gpu-2:8000')],
      });
      expect(policyRefusal(both, replicated)).toBeNull();
      expect(() => EpisodeJobData.parse({ ...replicated, replicas: ['file:///etc/passwd'] })).toThrow();
    } finally {
      declareReplicas('http://gpu-1:8000/v1', []);
    }
  });

  it('refuses a job whose egress proxy would reach a private destination the worker did not open', () => {
    const redis = job({ privateDestinations: ['127.0.0.1:6379'] });
    expect(policyRefusal(policy(), redis)).toMatch(
      /reach 127\.0\.0\.1:6379, which this worker does not open \(--allow-private-destination: none\)/,
    );
    const opened = policy({ privateDestinations: ['127.0.0.1:6379', 'db.lab.internal'] });
    expect(policyRefusal(opened, redis)).toBeNull();
    expect(policyRefusal(opened, job({ privateDestinations: ['169.254.169.254'] }))).toMatch(
      /169\.254\.169\.254/,
    );
  });

  it('puts the episode only in an existing run folder, through real folders, and takes tasks only from suites', () => {
    const directory = temporaryDirectory();
    try {
      const runs = join(directory.path, 'runs');
      const elsewhere = join(directory.path, 'elsewhere');
      mkdirSync(join(runs, 'my-run', 'episodes', 'done', 'workspace'), { recursive: true });
      writeFileSync(join(runs, 'my-run', 'episodes', 'done', 'episode.json'), '{}');
      mkdirSync(elsewhere);
      const folders = { runsDirectory: runs, suites: [] };
      const at = (changes: Partial<EpisodeJobData>) => () =>
        locateJobOnWorker({ ...job(), ...changes }, folders);

      expect(at({})()).toEqual({
        runDirectory: join(realpathSync(runs), 'my-run'),
        episodeDir: join(realpathSync(runs), 'my-run', 'episodes', 'L0-tiny-sum-v0'),
        taskDir: realpathSync(taskDir),
      });
      expect(at({ runName: 'other-run' })).toThrow(/run folder other-run is not under --runs/);
      symlinkSync(elsewhere, join(runs, 'linked-run'));
      expect(at({ runName: 'linked-run' })).toThrow(/is not a folder \(a link\?\)/);
      symlinkSync(elsewhere, join(runs, 'my-run', 'evaluation'));
      expect(at({ episodeDir: 'evaluation/episodes/x' })).toThrow(
        /goes through .*evaluation, which is not a folder/,
      );
      expect(at({ episodeDir: 'episodes/done/workspace/episodes/x' })).toThrow(
        /inside the episode .*episodes\/done/,
      );

      // A task an episode wrote (its generator would run on the worker, unsandboxed) or any other folder: refused.
      const written = join(runs, 'my-run', 'episodes', 'done', 'workspace', 'task');
      mkdirSync(written);
      expect(at({ task: { absolutePath: written } })).toThrow(/under --runs, which episodes write/);
      expect(at({ task: { absolutePath: elsewhere } })).toThrow(
        /neither this package’s nor in a suite.*none/,
      );
      expect(
        locateJobOnWorker(
          { ...job(), task: { absolutePath: elsewhere } },
          { runsDirectory: runs, suites: [elsewhere] },
        ).taskDir,
      ).toBe(realpathSync(elsewhere));
      expect(at({ task: { packagePath: 'no/such/task' } })).toThrow(/does not exist on this worker/);
    } finally {
      directory.remove();
    }
  });
});

describe('text from a job', () => {
  it('reaches a log line without control characters and bounded', () => {
    expect(printableText('job\n\u001b[31mforged line\r')).toBe('job [31mforged line ');
    expect(printableText('x'.repeat(2000))).toHaveLength(1001);
  });
});
