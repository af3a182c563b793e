import { execFileSync } from 'node:child_process';
import { copyFile, rm, symlink } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { checkProtectedAssets, loadTask, materializeWorkspace, sha256File } from '../../src/tasks/index.js';
import { removeScratch, scratch, writeToyTask } from './toy-task.js';

afterAll(removeScratch);

describe('the protected files’ check', () => {
  it('does not take a link to an untouched copy, nor a FIFO, for the protected file', async () => {
    const task = await loadTask(await writeToyTask());
    const dir = path.join(await scratch('mass-protected-'), 'workspace');
    await materializeWorkspace(task, { seed: 1, workspaceDir: dir });
    const pristine = path.join(await scratch('mass-protected-copy-'), 'sim.py');
    await copyFile(path.join(dir, 'sim/sim.py'), pristine);

    // The team edits the simulator it runs, and leaves a link to an untouched copy where the check looks.
    await rm(path.join(dir, 'sim/sim.py'));
    await symlink(pristine, path.join(dir, 'sim/sim.py'));
    expect((await checkProtectedAssets(task, dir)).map((finding) => finding.status)).toEqual(['missing']);
    await expect(sha256File(path.join(dir, 'sim/sim.py'))).rejects.toThrow();

    // Read as a file, a FIFO would wait for a writer forever.
    await rm(path.join(dir, 'sim/sim.py'));
    execFileSync('mkfifo', [path.join(dir, 'sim/sim.py')]);
    expect((await checkProtectedAssets(task, dir)).map((finding) => finding.status)).toEqual(['missing']);
    expect(await sha256File(pristine)).toMatch(/^[0-9a-f]{64}$/);

    // O_NOFOLLOW covers the last part of a path only: the folder on the way replaced by a link to an untouched copy.
    const copyFolder = path.dirname(pristine);
    await rm(path.join(dir, 'sim'), { recursive: true });
    await symlink(copyFolder, path.join(dir, 'sim'));
    expect((await checkProtectedAssets(task, dir)).map((finding) => finding.status)).toEqual(['missing']);
  });
});
