import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { loadHarborTask, loadHarborTasks } from '../../src/tasks/harbor-task.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { writeHarborTask } from './harbor-fixtures.js';

function writeTask(root: string, name: string, toml: string): string {
  return writeHarborTask(root, name, { 'task.toml': toml });
}

// A timeout past 2^31 − 1 ms fires at once in Node: a task that meant "never" had its verifier killed immediately and
// recorded as a timeout. Such a task is refused when it is read, naming the file and the field.
describe("a Harbor task's timeouts", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('refuses a verifier timeout past the timer range, naming the file, the field and the limit', async () => {
    const dir = writeTask(directory.path, 'forever', '[verifier]\ntimeout_sec = 3000000\n');
    await expect(loadHarborTask(dir)).rejects.toThrow(
      `${join(dir, 'task.toml')}: field "verifier.timeout_sec": must be at most 2147483 s (24.8 days), Node's timer limit (found 3000000)`,
    );
    // The same task read as a suite's task (mass tasks validate, mass episode) is refused the same way.
    await expect(loadTask(dir)).rejects.toThrow('field "verifier.timeout_sec"');
  });

  it('refuses the agent and build timeouts the same way, and infinities and NaN as not finite', async () => {
    const agent = writeTask(directory.path, 'agent', '[agent]\ntimeout_sec = 1e10\n');
    await expect(loadHarborTask(agent)).rejects.toThrow(
      'field "agent.timeout_sec": must be at most 2147483 s',
    );
    const infinite = writeTask(directory.path, 'infinite', '[agent]\ntimeout_sec = inf\n');
    await expect(loadHarborTask(infinite)).rejects.toThrow(
      'field "agent.timeout_sec": must be a finite number of seconds (found Infinity)',
    );
    const build = writeTask(directory.path, 'build', '[environment]\nbuild_timeout_sec = nan\n');
    await expect(loadHarborTask(build)).rejects.toThrow(
      'field "environment.build_timeout_sec": must be a finite number of seconds (found NaN)',
    );
    const negative = writeTask(directory.path, 'negative', '[verifier]\ntimeout_sec = -1\n');
    await expect(loadHarborTask(negative)).rejects.toThrow('must be more than 0 s (found -1)');
  });

  it('refuses a dataset holding such a task, and takes timeouts up to the limit', async () => {
    const dataset = join(directory.path, 'dataset');
    writeTask(dataset, 'fine', '[agent]\ntimeout_sec = 2147483\n[verifier]\ntimeout_sec = 0.5\n');
    writeTask(dataset, 'too-long', '[environment]\nbuild_timeout_sec = 2147484\n');
    await expect(loadHarborTasks([dataset])).rejects.toThrow(
      `${join(dataset, 'too-long', 'task.toml')}: field "environment.build_timeout_sec"`,
    );
    const fine = await loadHarborTask(join(dataset, 'fine'));
    expect(fine).toMatchObject({ agentTimeoutSec: 2_147_483, verifierTimeoutSec: 0.5 });
  });
});
