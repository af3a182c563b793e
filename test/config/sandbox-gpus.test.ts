import { describe, expect, it } from 'vitest';

import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { GpuPool } from '../../src/episode/gpu-pool.js';
import { episodeJobData } from '../../src/queue/episode-job.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('sandboxGpus', () => {
  it('reaches every episode of the run, and is absent by default', () => {
    const config = parseRunConfig({ ...minimal, sandboxGpus: [0, 1] }, 'config.yaml');
    expect(episodeSettings(config).gpus).toEqual([0, 1]);
    expect('gpus' in episodeSettings(parseRunConfig(minimal, 'config.yaml'))).toBe(false);
  });

  it('takes distinct GPU numbers', () => {
    expect(() => parseRunConfig({ ...minimal, sandboxGpus: [0, 0] }, 'config.yaml')).toThrow(
      'config.yaml: sandboxGpus: a GPU is listed twice',
    );
    expect(() => parseRunConfig({ ...minimal, sandboxGpus: [] }, 'config.yaml')).toThrow(
      /list at least one GPU/,
    );
    expect(() => parseRunConfig({ ...minimal, sandboxGpus: [-1] }, 'config.yaml')).toThrow(/sandboxGpus\.0/);
  });

  it('travels to a worker in an episode job, without this process’s pool', () => {
    const data = episodeJobData({
      runDirectory: '/runs/r',
      stepKey: 'search/x',
      options: {
        taskDir: '/tasks/t',
        model: 'm',
        baseUrl: 'http://gpu-1:8000/v1',
        seed: 1,
        outDir: '/runs/r/episodes/e',
        gpus: [2, 3],
        gpuPool: new GpuPool(),
      },
    });
    expect(data.options.gpus).toEqual([2, 3]);
    expect('gpuPool' in data.options).toBe(false);
  });
});
