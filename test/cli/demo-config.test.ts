import { describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE, demoConfig } from '../../src/demo/demo-config.js';
import { searchTaskDirs } from '../../src/search/search-config.js';

describe('the demo configuration', () => {
  it('is a valid run configuration for the toy model, over the demo suite’s train tasks', async () => {
    const config = RunConfig.parse(demoConfig('demo'));
    expect(config.roles.executor.provider).toBe('toy');
    expect(config.distill.needed).toBeGreaterThanOrEqual(config.distill.train + config.distill.validation);
    const tasks = await searchTaskDirs(DEMO_SUITE, config.tasks);
    expect(tasks.map((dir) => dir.split('/').at(-1))).toEqual(['demo-potency', 'demo-volatility']);
  });
});
