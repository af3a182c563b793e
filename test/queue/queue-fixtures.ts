import { fileURLToPath } from 'node:url';

import { episodeJobData } from '../../src/queue/episode-job.js';
import { QueueSecret } from '../../src/queue/queue-secret.js';
import { parseAllowedEndpoint, type WorkerPolicy } from '../../src/queue/worker-policy.js';

/** What the queue's unit tests share: a job as a coordinator makes it, its secret, and a worker's policy. */
export const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
export const secret = new QueueSecret('a-test-secret-of-at-least-32-characters');
export const STEP_KEY = 'search/L0/tiny-sum/v0/episode';

/** The job of the step's episode in the run `my-run`, with the episode's options changed as given. */
export const job = (
  overrides: Partial<Parameters<typeof episodeJobData>[0]['options']> = {},
  apiKeyEnv?: string,
) =>
  episodeJobData({
    runDirectory: '/coordinator/runs/my-run',
    stepKey: STEP_KEY,
    apiKeyEnv,
    options: {
      taskDir,
      model: 'm',
      baseUrl: 'http://gpu-1:8000/v1',
      seed: 3,
      outDir: '/coordinator/runs/my-run/episodes/L0-tiny-sum-v0',
      ...overrides,
    },
  });

/** A worker serving gpu-1:8000, sandboxed, with no key, up to 5 attempts and 10 minutes' wait. */
export const policy = (overrides: Partial<WorkerPolicy> = {}): WorkerPolicy => ({
  allowUnsandboxed: false,
  apiKeyVariables: [],
  endpoints: [parseAllowedEndpoint('gpu-1:8000')],
  suites: [],
  maxAttempts: 5,
  maxDelayMs: 600_000,
  privateDestinations: [],
  ...overrides,
});
