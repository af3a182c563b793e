import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { EpisodeJobData, episodeJobData } from '../../src/queue/episode-job.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('network.privateDestinations', () => {
  it('is empty unless the configuration names destinations, and reaches every episode and queued job', () => {
    expect(episodeSettings(parseRunConfig(minimal, 'config.yaml')).privateDestinations).toBeUndefined();
    const config = parseRunConfig(
      { ...minimal, network: { privateDestinations: ['10.0.0.5:8000', 'db.lab.internal'] } },
      'config.yaml',
    );
    const settings = episodeSettings(config);
    expect(settings.privateDestinations).toEqual(['10.0.0.5:8000', 'db.lab.internal']);
    const job = episodeJobData({
      runDirectory: '/coordinator/runs/try-1',
      stepKey: 'search/L0/tiny-sum/v0/episode',
      options: {
        ...settings,
        taskDir: fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url)),
        model: 'm',
        baseUrl: 'http://gpu-1:8000/v1',
        seed: 3,
        outDir: '/coordinator/runs/try-1/episodes/L0-tiny-sum-v0',
      },
    });
    expect(job.options.privateDestinations).toEqual(['10.0.0.5:8000', 'db.lab.internal']);
    const forged = { ...job, options: { ...job.options, privateDestinations: ['http://169.254.169.254/'] } };
    expect(EpisodeJobData.safeParse(forged).success).toBe(false);
  });

  it('takes allow-list entries only, and names the field of one that is not', () => {
    expect(() =>
      parseRunConfig(
        { ...minimal, network: { privateDestinations: ['redis://10.0.0.5:6379'] } },
        'config.yaml',
      ),
    ).toThrow(
      /config\.yaml: network\.privateDestinations\.0: "redis:\/\/10\.0\.0\.5:6379" is a URL, not a host/,
    );
    expect(() => parseRunConfig({ ...minimal, network: { opens: [] } }, 'config.yaml')).toThrow(/network/);
  });
});
