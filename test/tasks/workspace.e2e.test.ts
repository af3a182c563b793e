import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { removeScratch, scratch, writeToyTask } from './toy-task.js';
import { SystemError, UserError } from '../../src/errors.js';
import { gradeWorkspace, gradeWorkspaces } from '../../src/tasks/grade.js';
import { checkProtectedAssets } from '../../src/tasks/integrity.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { materializeWorkspace } from '../../src/tasks/materialize.js';

async function newWorkspaceDir(): Promise<string> {
  return path.join(await scratch('mass-toy-workspace-'), 'workspace');
}

afterAll(removeScratch);

describe('a toy task end to end: materialise, check integrity, grade', () => {
  it('copies inputs, runs the generator for the seed, and records the protected digests', async () => {
    const task = await loadTask(await writeToyTask());
    const workspaceDir = await newWorkspaceDir();
    const workspace = await materializeWorkspace(task, { seed: 5, workspaceDir });
    expect(workspace.files).toEqual(['data/values.csv', 'sim/sim.py']);
    expect(await readFile(path.join(workspaceDir, 'data/values.csv'), 'utf8')).toBe('seed,value\n5,2\n');
    expect(workspace.protectedAssets).toEqual([
      { path: 'sim/sim.py', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });

  it('refuses a workspace folder that is not empty, and a bad seed', async () => {
    const task = await loadTask(await writeToyTask());
    const workspaceDir = await newWorkspaceDir();
    await mkdir(workspaceDir, { recursive: true });
    await writeFile(path.join(workspaceDir, 'left-over.txt'), 'x');
    await expect(materializeWorkspace(task, { seed: 1, workspaceDir })).rejects.toThrow(UserError);
    await expect(
      materializeWorkspace(task, { seed: -1, workspaceDir: await newWorkspaceDir() }),
    ).rejects.toThrow('seed -1: use an integer from 0 to 2147483647');
  });

  it('reports a failing generator with its stderr', async () => {
    const task = await loadTask(
      await writeToyTask(undefined, { 'generator/generate.py': 'raise SystemExit("no data for you")\n' }),
    );
    await expect(
      materializeWorkspace(task, { seed: 1, workspaceDir: await newWorkspaceDir() }),
    ).rejects.toThrow(/generator generator\/generate\.py exited with 1 for seed 1:\nno data for you/);
  });

  it('finds protected assets unchanged, modified or missing', async () => {
    const task = await loadTask(await writeToyTask());
    const workspaceDir = await newWorkspaceDir();
    await materializeWorkspace(task, { seed: 1, workspaceDir });
    expect((await checkProtectedAssets(task, workspaceDir)).map((finding) => finding.status)).toEqual([
      'unchanged',
    ]);
    await writeFile(path.join(workspaceDir, 'sim/sim.py'), 'def simulate():\n    return 1000\n');
    expect(await checkProtectedAssets(task, workspaceDir)).toEqual([
      expect.objectContaining({ path: 'sim/sim.py', status: 'modified', actualSha256: expect.any(String) }),
    ]);
    await import('node:fs/promises').then((fs) => fs.rm(path.join(workspaceDir, 'sim/sim.py')));
    expect((await checkProtectedAssets(task, workspaceDir))[0]!.status).toBe('missing');
  });

  it('grades one workspace or several in one grader process, validating the JSON', async () => {
    const task = await loadTask(await writeToyTask());
    const right = await newWorkspaceDir();
    const wrong = await newWorkspaceDir();
    for (const [dir, answer] of [
      [right, 42],
      [wrong, 41],
    ] as const) {
      await materializeWorkspace(task, { seed: 3, workspaceDir: dir });
      await mkdir(path.join(dir, 'results'));
      await writeFile(path.join(dir, 'results/metrics.json'), JSON.stringify({ answer }));
    }
    expect((await gradeWorkspace(task, { workspaceDir: right, seed: 3 })).score).toBe(100);
    const grades = await gradeWorkspaces(task, { workspaceDirs: [right, wrong], seed: 3 });
    expect(grades.map((grade) => [grade.score, grade.parts[0]!.reason])).toEqual([
      [100, 'right'],
      [0, 'answer 41'],
    ]);
  });

  it('treats a grader that crashes or prints garbage as a system error', async () => {
    const crashing = await loadTask(
      await writeToyTask(undefined, { 'oracle/grade.py': 'raise RuntimeError("bug")\n' }),
    );
    const workspaceDir = await newWorkspaceDir();
    await materializeWorkspace(crashing, { seed: 1, workspaceDir });
    await expect(gradeWorkspace(crashing, { workspaceDir, seed: 1 })).rejects.toThrow(SystemError);
    const chatty = await loadTask(
      await writeToyTask(undefined, { 'oracle/grade.py': 'print("looks good to me")\n' }),
    );
    await expect(gradeWorkspace(chatty, { workspaceDir, seed: 1 })).rejects.toThrow(
      /printed something that is not JSON/,
    );
    await expect(
      gradeWorkspace(chatty, { workspaceDir: path.join(workspaceDir, 'nope'), seed: 1 }),
    ).rejects.toThrow(UserError);
  });
});
