import {
  chmodSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HARBOR_FILE_LIMITS } from '../../src/tasks/harbor-task-files.js';
import { loadHarborDataset, loadHarborTask, loadHarborTasks } from '../../src/tasks/harbor-task.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { materializeWorkspace } from '../../src/tasks/materialize.js';
import { temporaryDirectory } from '../support/fixtures.js';

const TOML = 'version = "1.0"\n[environment]\nallow_internet = false\n';

function writeTask(dir: string, files: Record<string, string> = {}): string {
  for (const [file, text] of Object.entries({
    'task.toml': TOML,
    'instruction.md': 'Write results/answer.txt.\n',
    'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
    'solution/solve.sh': 'echo 42 > results/answer.txt\n',
    'environment/input.csv': 'x\n1\n',
    ...files,
  })) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/**
 * A dataset is someone else's code and text: a task of it that reaches a host file through a link, holds a special
 * file or is oversized must be skipped with the path and the reason, never read, while the other tasks still load.
 */
describe('a hostile Harbor dataset', () => {
  const directory = temporaryDirectory();
  const servers: Server[] = [];
  const host = join(directory.path, 'host');
  const dataset = join(directory.path, 'dataset');
  afterAll(() => {
    for (const server of servers) server.close();
    chmodSync(join(host, 'private'), 0o700);
    directory.remove();
  });

  beforeAll(async () => {
    // What the host holds that no task may read: a mode-600 file, a mode-700 folder, a folder a verifier could write.
    mkdirSync(join(host, 'private'), { recursive: true });
    writeFileSync(join(host, 'private', 'id_rsa'), 'PRIVATE KEY');
    chmodSync(join(host, 'private'), 0o700);
    writeFileSync(join(host, 'token'), 'SECRET TOKEN');
    chmodSync(join(host, 'token'), 0o600);
    mkdirSync(join(host, 'writable'));

    writeTask(join(dataset, 'honest'));
    const environmentLink = writeTask(join(dataset, 'environment-link'));
    rmTree(join(environmentLink, 'environment'));
    symlinkSync('/etc', join(environmentLink, 'environment'));
    const privateFolder = writeTask(join(dataset, 'environment-private'));
    rmTree(join(privateFolder, 'environment'));
    symlinkSync(join(host, 'private'), join(privateFolder, 'environment'));
    const instructionLink = writeTask(join(dataset, 'instruction-link'));
    rmTree(join(instructionLink, 'instruction.md'));
    symlinkSync(join(host, 'token'), join(instructionLink, 'instruction.md'));
    const testsLink = writeTask(join(dataset, 'tests-link'));
    rmTree(join(testsLink, 'tests'));
    symlinkSync(join(host, 'writable'), join(testsLink, 'tests'));
    writeFileSync(join(host, 'writable', 'test.sh'), 'echo 1 > /logs/verifier/reward.txt\n');
    const innerLink = writeTask(join(dataset, 'inner-link'));
    symlinkSync(join(host, 'token'), join(innerLink, 'environment', 'notes.md'));
    const solutionLink = writeTask(join(dataset, 'solution-inner-link'));
    symlinkSync(join(host, 'private'), join(solutionLink, 'solution', 'keys'));
    const socket = writeTask(join(dataset, 'tests-socket'));
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(join(socket, 'tests', 'control.sock'), resolve));
    writeTask(join(dataset, 'huge-instruction'), {
      'instruction.md': 'x'.repeat(HARBOR_FILE_LIMITS.maxTextBytes + 1),
    });
    const hugeTest = writeTask(join(dataset, 'huge-test-file'));
    writeFileSync(join(hugeTest, 'tests', 'data.bin'), '');
    truncateSync(join(hugeTest, 'tests', 'data.bin'), HARBOR_FILE_LIMITS.folders.tests.maxFileBytes + 1);
    writeTask(join(directory.path, 'elsewhere'));
    symlinkSync(join(directory.path, 'elsewhere'), join(dataset, 'linked-task'));
  });

  it('skips each such task with a reason naming the path, and loads the rest', async () => {
    const { tasks, refused } = await loadHarborDataset([dataset]);
    expect(tasks.map((task) => task.name)).toEqual(['honest']);
    const reasons = Object.fromEntries(refused.map((task) => [task.task, task.reason]));
    expect(Object.keys(reasons).sort()).toEqual([
      'environment-link',
      'environment-private',
      'huge-instruction',
      'huge-test-file',
      'inner-link',
      'instruction-link',
      'linked-task',
      'solution-inner-link',
      'tests-link',
      'tests-socket',
    ]);
    expect(reasons['environment-link']).toBe(
      `${join(dataset, 'environment-link', 'environment')} is a symbolic link, not a folder: it is never followed or read`,
    );
    expect(reasons['environment-private']).toContain(join(dataset, 'environment-private', 'environment'));
    expect(reasons['instruction-link']).toBe(
      `${join(dataset, 'instruction-link', 'instruction.md')} is a symbolic link, not a file: it is never followed or read`,
    );
    expect(reasons['tests-link']).toMatch(/tests-link\/tests is a symbolic link, not a folder/);
    expect(reasons['inner-link']).toBe(
      `${join(dataset, 'inner-link', 'environment', 'notes.md')} is a symbolic link: a task's files are folders and regular files only, never followed or read`,
    );
    expect(reasons['solution-inner-link']).toContain(join('solution-inner-link', 'solution', 'keys'));
    expect(reasons['tests-socket']).toMatch(/tests\/control\.sock is a socket/);
    expect(reasons['huge-instruction']).toBe(
      `${join(dataset, 'huge-instruction', 'instruction.md')} holds ${HARBOR_FILE_LIMITS.maxTextBytes + 1} bytes, over the ${HARBOR_FILE_LIMITS.maxTextBytes} read`,
    );
    expect(reasons['huge-test-file']).toMatch(
      /tests\/data\.bin holds \d+ bytes, over the 67108864 a file of tests\/ may/,
    );
    expect(reasons['linked-task']).toMatch(
      /linked-task is a symbolic link: a task is a folder of its dataset/,
    );
    // Nothing of the host reached a reason.
    expect(JSON.stringify(refused)).not.toMatch(/SECRET TOKEN|PRIVATE KEY/);
  });

  it('a task loaded alone, or as a mass task, is refused the same way', async () => {
    await expect(loadHarborTask(join(dataset, 'instruction-link'))).rejects.toThrow(
      /instruction\.md is a symbolic link/,
    );
    await expect(loadTask(join(dataset, 'environment-link'))).rejects.toThrow(
      /environment is a symbolic link/,
    );
    await expect(loadHarborTasks([join(dataset, 'tests-link')])).rejects.toThrow(/tests is a symbolic link/);
    const honest = await loadHarborTask(join(dataset, 'honest'));
    expect(honest).toMatchObject({ environmentFiles: ['input.csv'], hasSolution: true });
  });

  it('an environment file swapped for a link after the task was loaded is never followed into the workspace', async () => {
    const swapped = writeTask(join(directory.path, 'later', 'swapped'));
    const task = await loadTask(swapped);
    await materializeWorkspace(task, { seed: 1, workspaceDir: join(directory.path, 'later', 'before') });
    expect(readFileSync(join(directory.path, 'later', 'before', 'input.csv'), 'utf8')).toBe('x\n1\n');
    rmTree(join(swapped, 'environment', 'input.csv'));
    symlinkSync(join(host, 'token'), join(swapped, 'environment', 'input.csv'));
    const workspaceDir = join(directory.path, 'later', 'after');
    await expect(materializeWorkspace(task, { seed: 1, workspaceDir })).rejects.toThrow(
      /environment\/input\.csv is a symbolic link, not a file/,
    );
    expect(() => readFileSync(join(workspaceDir, 'input.csv'))).toThrow();
  });
});

function rmTree(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
