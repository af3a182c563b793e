import { afterAll, describe, expect, it } from 'vitest';

import { describeInternet, internetLabel, taskEnvironment } from '../../src/benchmark/task-environment.js';
import { loadHarborTask } from '../../src/tasks/harbor-task.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { writeHarborTask } from '../tasks/harbor-fixtures.js';

const directory = temporaryDirectory('mass-internet-');
afterAll(() => directory.remove());

const taskWith = (name: string, toml: string) =>
  loadHarborTask(writeHarborTask(directory.path, name, { 'task.toml': `version = "1.0"\n${toml}` }));

describe("a benchmark task's internet", () => {
  it('is every public host by default for a task that asks for it or leaves allow_internet out', async () => {
    for (const task of [
      await taskWith('unsaid', ''),
      await taskWith('asks', '[environment]\nallow_internet = true\n'),
    ]) {
      const environment = taskEnvironment(task, [], { kind: 'public' }, null);
      expect(environment).toEqual({ kind: 'host', network: { anyPublicHost: true } });
      expect(internetLabel(task, { anyPublicHost: true })).toBe('public');
    }
  });

  it('is an allow-list, none, or a skip, as --internet says; a task that asks for none gets none whatever it says', async () => {
    const asks = await taskWith('asks-too', '');
    const offline = await taskWith('offline', '[environment]\nallow_internet = false\n');
    expect(taskEnvironment(asks, [], { kind: 'allow', hosts: ['pypi.org'] }, null)).toEqual({
      kind: 'host',
      network: { allow: ['pypi.org'] },
    });
    expect(internetLabel(asks, { allow: ['pypi.org', '*.rcsb.org'] })).toBe('allow:pypi.org,*.rcsb.org');
    expect(taskEnvironment(asks, [], { kind: 'offline' }, null)).toEqual({ kind: 'host', network: false });
    expect(internetLabel(asks, false)).toBe('offline');
    const refused = taskEnvironment(asks, [], { kind: 'refuse' }, null);
    expect(refused).toMatchObject({ kind: 'skipped' });
    expect(refused.kind === 'skipped' && refused.reason).toMatch(/--internet refuse skips such tasks/);
    for (const internet of [{ kind: 'public' }, { kind: 'refuse' }, { kind: 'offline' }] as const) {
      expect(taskEnvironment(offline, [], internet, null)).toEqual({ kind: 'host', network: false });
    }
    expect(internetLabel(offline, false)).toBe('none');
    expect(describeInternet('none')).toMatch(/asks for none/);
    expect(describeInternet('offline')).toMatch(/asks for the internet; the run gave it none/);
  });
});
