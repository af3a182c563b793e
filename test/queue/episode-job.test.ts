import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { Execution } from '../../src/config/execution.js';
import { EpisodeJobData, episodeJobData, episodeOptionsOnWorker } from '../../src/queue/episode-job.js';
import { endpointQueueName, episodeJobId } from '../../src/queue/job-identity.js';
import { parseRedisUrl } from '../../src/queue/redis-connection.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

const job = (apiKeyEnv?: string) =>
  episodeJobData({
    runDirectory: '/coordinator/runs/my-run',
    stepKey: 'search/L0/tiny-sum/v0/episode',
    apiKeyEnv,
    options: {
      taskDir,
      model: 'm',
      baseUrl: 'http://gpu-1:8000/v1',
      apiKey: 'sk-the-real-key',
      seed: 3,
      outDir: '/coordinator/runs/my-run/episodes/L0-tiny-sum-v0',
      hiddenDirectories: ['/coordinator/runs/my-run'],
      log: () => {},
    },
  });

/** An episode job of every option, as `episodeJobData` wrote it before `EpisodeSpec`. */
const OLD_JOB = `{
  "schemaVersion": 1,
  "kind": "episode-job",
  "runName": "my-run",
  "stepKey": "search/L0/tiny-sum/v1/episode",
  "episodeDir": "episodes/L0-tiny-sum-v1",
  "task": { "packagePath": "test/fixtures/tasks/tiny-sum" },
  "apiKeyEnv": "MASS_JOB_TEST_KEY",
  "options": {
    "workflow": { "schemaVersion": 1, "text": "One analyst does the whole task." },
    "teacher": false,
    "model": "Qwen/Qwen3.6-35B-A3B",
    "baseUrl": "http://gpu-1:8000/v1",
    "seed": 3,
    "dataSeed": 7,
    "timeoutSeconds": 1800,
    "cpuSeconds": 7200,
    "memoryBytes": 8589934592,
    "processLimit": 512,
    "diskBytes": 34359738368,
    "maxOutputTokens": 32768,
    "outputBudget": 200000,
    "sampling": { "temperature": 0.6, "topP": 0.95, "topK": 20, "enableThinking": true },
    "contextWindowSize": 262144,
    "sandbox": "bubblewrap",
    "stopOnModelError": true,
    "sandboxHide": ["/srv/datasets/private"],
    "retry": { "maxAttempts": 5, "responseHeadTimeoutMs": null },
    "singleAgent": false,
    "network": { "anyPublicHost": true },
    "privateDestinations": ["registry.internal:5000"],
    "harnessProfile": "lean",
    "images": true,
    "gpus": [0, 3]
  }
}`;

describe('episode jobs', () => {
  afterEach(() => {
    delete process.env.MASS_JOB_TEST_KEY;
  });

  it('carry the key’s variable, never the key, nor the coordinator’s paths; the worker maps them onto its own', () => {
    const data = job('MASS_JOB_TEST_KEY');
    expect(JSON.stringify(data)).not.toContain('sk-the-real-key');
    expect(JSON.stringify(data)).not.toContain('/coordinator');
    expect(data).toMatchObject({
      runName: 'my-run',
      episodeDir: 'episodes/L0-tiny-sum-v0',
      task: { packagePath: 'test/fixtures/tasks/tiny-sum' },
      apiKeyEnv: 'MASS_JOB_TEST_KEY',
    });
    const runs = temporaryDirectory();
    try {
      mkdirSync(join(runs.path, 'my-run'));
      const folders = { runsDirectory: runs.path, suites: [] };
      expect(() => episodeOptionsOnWorker(data, folders)).toThrow(
        /MASS_JOB_TEST_KEY is not set on this worker/,
      );
      process.env.MASS_JOB_TEST_KEY = 'worker-key';
      const located = episodeOptionsOnWorker(data, folders);
      expect(located.episodeDir).toBe(join(realpathSync(runs.path), 'my-run/episodes/L0-tiny-sum-v0'));
      expect(located.options).toMatchObject({
        taskDir: join(packageRoot, 'test/fixtures/tasks/tiny-sum'),
        apiKey: 'worker-key',
        seed: 3,
      });
    } finally {
      runs.remove();
    }
  });

  it('refuse an episode directory outside the run and options they do not know', () => {
    const data = job();
    expect(EpisodeJobData.safeParse({ ...data, episodeDir: '../other-run/episodes/x' }).success).toBe(false);
    expect(EpisodeJobData.safeParse({ ...data, options: { ...data.options, apiKey: 'sk' } }).success).toBe(
      false,
    );
  });

  it("carry a benchmark's network to the worker: an allow-list, or every public host", () => {
    const withNetwork = (network: unknown) =>
      EpisodeJobData.safeParse({ ...job(), options: { ...job().options, network } });
    expect(withNetwork({ anyPublicHost: true })).toMatchObject({
      success: true,
      data: { options: { network: { anyPublicHost: true } } },
    });
    expect(withNetwork({ allow: ['pypi.org'] }).success).toBe(true);
    expect(withNetwork({ allow: ['*'] }).success).toBe(false);
    expect(withNetwork({ anyPublicHost: true, allow: ['pypi.org'] }).success).toBe(false);
  });

  it('as written before the episode specification (every field it carried) still parse, unchanged', () => {
    // A job as the queue stored it when its options were a hand-written schema of their own.
    const stored = JSON.parse(OLD_JOB) as unknown;
    const parsed = EpisodeJobData.parse(stored);
    expect(parsed).toEqual(stored);
    expect(parsed.options.outputBudget).toBe(200000);
    expect(parsed.options.retry).toEqual({ maxAttempts: 5, responseHeadTimeoutMs: null });
    // Its path rules hold as before: a host path to hide must be absolute, and the options are closed.
    const hiding = (sandboxHide: string[]) =>
      EpisodeJobData.safeParse({ ...parsed, options: { ...parsed.options, sandboxHide } }).success;
    expect(hiding(['/srv/secrets'])).toBe(true);
    expect(hiding(['srv/secrets'])).toBe(false);
    expect(hiding(['/srv/../etc'])).toBe(false);
    const withOption = (name: string, value: unknown) =>
      EpisodeJobData.safeParse({ ...parsed, options: { ...parsed.options, [name]: value } }).success;
    expect(withOption('outDir', '/elsewhere')).toBe(false);
    expect(withOption('model', '--yolo')).toBe(false);
    expect(withOption('outputBudget', 0)).toBe(false);
    expect(withOption('sandbox', 'container')).toBe(false);
  });

  it('have ids from the run and the step, without the colon BullMQ refuses; one queue per endpoint', () => {
    const id = episodeJobId('my-run', 'search/L0/tiny-sum/v0/episode');
    expect(id).toBe(episodeJobId('my-run', 'search/L0/tiny-sum/v0/episode'));
    expect(id).not.toBe(episodeJobId('my-run', 'search/L0/tiny-sum/v1/episode'));
    expect(id).not.toBe(episodeJobId('other-run', 'search/L0/tiny-sum/v0/episode'));
    expect(id).not.toContain(':');
    expect(endpointQueueName('http://gpu-1:8000/v1/')).toBe(endpointQueueName('http://gpu-1:8000/v1'));
    expect(endpointQueueName('http://gpu-1:8000/v1')).not.toBe(endpointQueueName('http://gpu-2:8000/v1'));
  });

  it('go to a Redis named without its password', () => {
    expect(() => parseRedisUrl('redis://:hunter2@queue:6379')).toThrow(/holds a password/);
    expect(parseRedisUrl('redis://queue:6379').port).toBe('6379');
    expect(Execution.safeParse({ backend: 'queue' }).success).toBe(false);
    expect(Execution.safeParse({ backend: 'queue', redis: 'redis://u:p@queue:6379' }).success).toBe(false);
    expect(Execution.parse({ backend: 'queue', redis: 'redis://queue:6379' }).backend).toBe('queue');
  });
});
