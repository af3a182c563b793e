import { describe, expect, it } from 'vitest';

import { parseSizeBytes } from '../../src/cli/size.js';
import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { episodeJobData } from '../../src/queue/episode-job.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('sandbox limits in the run configuration and on the command line', () => {
  it('reach every episode of a run from the budgets, and travel in queue jobs', () => {
    const config = parseRunConfig(
      { ...minimal, budgets: { episodeCpuSeconds: 7200, episodeProcesses: 256, episodeDiskGiB: 4 } },
      'config.yaml',
    );
    const settings = episodeSettings(config);
    expect(settings).toMatchObject({ cpuSeconds: 7200, processLimit: 256, diskBytes: 4 * 1024 ** 3 });
    const job = episodeJobData({
      runDirectory: '/runs/try-1',
      stepKey: 'search/L0/tiny-sum/v0/episode',
      options: {
        taskDir: '/tasks/tiny-sum',
        model: 'm',
        baseUrl: 'http://gpu:8000/v1',
        seed: 1,
        outDir: '/runs/try-1/episodes/e1',
        ...settings,
      },
    });
    expect(job.options).toMatchObject({ cpuSeconds: 7200, processLimit: 256, diskBytes: 4 * 1024 ** 3 });
  });

  it('leave the sandbox’s defaults where the budgets say nothing', () => {
    const settings = episodeSettings(parseRunConfig(minimal, 'config.yaml'));
    expect(settings.cpuSeconds).toBeUndefined();
    expect(settings.processLimit).toBeUndefined();
    expect(settings.diskBytes).toBeUndefined();
  });

  it('refuse a process limit that is not a whole positive number', () => {
    expect(() => parseRunConfig({ ...minimal, budgets: { episodeProcesses: 0 } }, 'config.yaml')).toThrow(
      /budgets\.episodeProcesses/,
    );
  });

  it('read sizes in powers of 1024, and say what a bad one should look like', () => {
    expect(parseSizeBytes('32G', '--disk-limit')).toBe(32 * 1024 ** 3);
    expect(parseSizeBytes('500MiB', '--disk-limit')).toBe(500 * 1024 ** 2);
    expect(parseSizeBytes('1.5t', '--disk-limit')).toBe(1.5 * 1024 ** 4);
    expect(parseSizeBytes('4096', '--disk-limit')).toBe(4096);
    expect(() => parseSizeBytes('lots', '--disk-limit')).toThrow(
      '--disk-limit "lots" is not a size: use e.g. 32G, 500M or 1T',
    );
    expect(() => parseSizeBytes('0G', '--disk-limit')).toThrow('--disk-limit must be more than zero');
  });
});
