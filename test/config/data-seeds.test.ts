import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { dataSeeds, taskDataSeed } from '../../src/config/data-seeds.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { distillSettings } from '../../src/distill/index.js';
import { searchSettings, searchTaskDirs } from '../../src/search/search-config.js';

const minimal = {
  name: 'try-1',
  suite: 'test/fixtures/tasks',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};
const suiteDir = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));

describe('data seeds of a run', () => {
  it('default to the seed, and a task may have its own', () => {
    const plain = parseRunConfig({ ...minimal, seed: 5 }, 'config.yaml');
    expect(taskDataSeed(dataSeeds(plain), 'tiny-sum')).toBe(5);

    const config = parseRunConfig(
      { ...minimal, seed: 5, dataSeed: 40, taskDataSeeds: { 'tiny-mean': 41 } },
      'config.yaml',
    );
    for (const settings of [searchSettings(config), distillSettings(config)]) {
      expect(settings.seed).toBe(5);
      expect(taskDataSeed(settings.dataSeeds, 'tiny-sum')).toBe(40);
      expect(taskDataSeed(settings.dataSeeds, 'tiny-mean')).toBe(41);
    }
  });

  it('refuse a seed out of the generators’ range, and a data seed for a task the suite does not have', async () => {
    expect(() => parseRunConfig({ ...minimal, dataSeed: 2 ** 31 }, 'config.yaml')).toThrow(
      'config.yaml: dataSeed:',
    );
    const config = parseRunConfig({ ...minimal, taskDataSeeds: { 'tiny-mena': 3 } }, 'config.yaml');
    await expect(searchTaskDirs(suiteDir, undefined, dataSeeds(config))).rejects.toThrow(
      `taskDataSeeds: tiny-mena is not in suite ${suiteDir}. Its tasks: tiny-mean, tiny-sum`,
    );
    // A task outside the search has its data seed for the evaluation.
    await expect(
      searchTaskDirs(suiteDir, ['tiny-sum'], { seed: 0, tasks: { 'tiny-mean': 3 } }),
    ).resolves.toHaveLength(1);
  });
});
