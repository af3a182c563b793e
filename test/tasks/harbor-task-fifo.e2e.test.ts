import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { loadHarborDataset } from '../../src/tasks/harbor-task.js';
import { temporaryDirectory } from '../support/fixtures.js';

function writeTask(dir: string): void {
  for (const [file, text] of Object.entries({
    'task.toml': 'version = "1.0"\n[environment]\nallow_internet = false\n',
    'instruction.md': 'Do it.\n',
    'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
    'environment/input.csv': 'x\n1\n',
  })) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
}

/** A FIFO needs `mkfifo` (Node cannot make one), so this lives in the end-to-end tier. */
describe('a Harbor dataset holding FIFOs', () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('skips a task whose instruction or environment file is a FIFO, without blocking on it', async () => {
    const dataset = join(directory.path, 'dataset');
    writeTask(join(dataset, 'fine'));
    writeTask(join(dataset, 'fifo-instruction'));
    rmSync(join(dataset, 'fifo-instruction', 'instruction.md'));
    execFileSync('mkfifo', [join(dataset, 'fifo-instruction', 'instruction.md')]);
    writeTask(join(dataset, 'fifo-environment'));
    execFileSync('mkfifo', [join(dataset, 'fifo-environment', 'environment', 'feed')]);

    const { tasks, refused } = await loadHarborDataset([dataset]);

    expect(tasks.map((task) => task.name)).toEqual(['fine']);
    expect(refused).toEqual([
      {
        task: 'fifo-environment',
        reason: `${join(dataset, 'fifo-environment', 'environment', 'feed')} is a FIFO: a task's files are folders and regular files only, never followed or read`,
      },
      {
        task: 'fifo-instruction',
        reason: `${join(dataset, 'fifo-instruction', 'instruction.md')} is a FIFO, not a file: it is never followed or read`,
      },
    ]);
  }, 20_000);
});
