import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { loadHarborTask, loadHarborTasks } from '../../src/tasks/harbor-task.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { writeHarborTask } from './harbor-fixtures.js';

const BUNDLED = fileURLToPath(new URL('../../benchmarks/mass-mini', import.meta.url));

describe("Harbor's task format", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('reads every bundled task, with its timeouts, limits and environment files', async () => {
    const tasks = await loadHarborTasks([BUNDLED]);
    expect(tasks.length).toBeGreaterThanOrEqual(6);
    for (const task of tasks) {
      expect(task).toMatchObject({
        agentTimeoutSec: 600,
        verifierTimeoutSec: 60,
        memoryBytes: 2048 * 1024 ** 2,
        allowInternet: false,
        hasSolution: true,
        container: { image: null, dockerfile: false, compose: false },
      });
      expect(task.environmentFiles.length).toBeGreaterThan(0);
      expect(task.instruction.trim()).not.toBe('');
    }
  });

  it("fills Harbor's defaults, reads sizes, and keeps a container's own files out of the workspace", async () => {
    const dir = writeHarborTask(directory.path, 'defaults', {
      'task.toml':
        'version = "1.0"\n[metadata]\nanything = { nested = true }\n[environment]\nmemory = "512M"\nstorage = "10G"\ndocker_image = "python:3.12"\n[future]\nfield = 1\n',
      'environment/Dockerfile': 'FROM python:3.12\n',
      'environment/data/input.csv': 'x\n1\n',
    });
    const task = await loadHarborTask(dir);
    expect(task).toMatchObject({
      name: 'defaults',
      agentTimeoutSec: 600,
      verifierTimeoutSec: 600,
      allowInternet: true,
      memoryBytes: 512 * 1024 ** 2,
      storageBytes: 10 * 1024 ** 3,
      hasSolution: false,
      environmentFiles: ['data/input.csv'],
      container: { image: 'python:3.12', dockerfile: true, compose: false },
    });
  });

  it('refuses a malformed task.toml, a missing instruction or verifier, naming the file and the field', async () => {
    const syntax = writeHarborTask(directory.path, 'syntax', { 'task.toml': '[verifier\n' });
    await expect(loadHarborTask(syntax)).rejects.toThrow(`${join(syntax, 'task.toml')}: not valid TOML`);
    const field = writeHarborTask(directory.path, 'field', {
      'task.toml': '[agent]\ntimeout_sec = "soon"\n',
    });
    await expect(loadHarborTask(field)).rejects.toThrow(
      `${join(field, 'task.toml')}: field "agent.timeout_sec"`,
    );
    const bare = join(directory.path, 'bare');
    mkdirSync(bare);
    writeFileSync(join(bare, 'task.toml'), 'version = "1.0"\n');
    const error = await loadHarborTask(bare).catch((caught: Error) => caught.message);
    expect(error).toContain(`${join(bare, 'instruction.md')}: file not found`);
    expect(error).toContain(`${join(bare, 'tests', 'test.sh')}: file not found`);
    await expect(loadHarborTasks([join(directory.path, 'nothing')])).rejects.toThrow('no such folder');
  });

  it('runs as its instruction alone, its tests and solution withheld', async () => {
    const dir = writeHarborTask(directory.path, 'episode-view', {
      'task.toml': '[environment]\nallow_internet = false\n',
      'instruction.md': '# Count\n\nWrite the count to `count.txt`.\n',
      'environment/rows.csv': 'a\n1\n',
      'solution/solve.sh': 'echo 1 > count.txt\n',
    });
    const task = await loadTask(dir);
    expect(task.harbor?.name).toBe('episode-view');
    expect(task.manifest.inputs.files).toEqual([{ from: 'environment/rows.csv', to: 'rows.csv' }]);
    expect(task.withheldDirs).toEqual([join(dir, 'tests'), join(dir, 'solution')]);
    const prompt = renderTaskPrompt(task);
    expect(prompt.startsWith('# Count\n\nWrite the count to `count.txt`.\n\n## Environment')).toBe(true);
    expect(prompt).toContain('No network access');
    expect(prompt).not.toContain('Deliverables');
  });
});
