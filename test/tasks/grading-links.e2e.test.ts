import { execFileSync } from 'node:child_process';
import { link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { sandboxedEntryPointRunner } from '../../src/episode/entry-point-sandbox.js';
import {
  gradeWorkspace,
  gradeWorkspaces,
  loadTask,
  materializeWorkspace,
  type LoadedTask,
} from '../../src/tasks/index.js';
import { suiteDir } from './support.js';
import { minimalManifest, removeScratch, scratch, writeToyTask } from './toy-task.js';

/**
 * The toy grader reads `results/metrics.json` through Python's pathlib, as every grader reads a workspace: it follows
 * links like any program. What a team leaves in its workspace must not let it borrow another workspace's answer.
 */
const SEED = 3;
const RIGHT = JSON.stringify({ answer: 42 });

afterAll(removeScratch);

async function workspace(task: LoadedTask, parent: string, name: string): Promise<string> {
  const dir = path.join(parent, name, 'workspace');
  await materializeWorkspace(task, { seed: SEED, workspaceDir: dir });
  await mkdir(path.join(dir, 'results'));
  return dir;
}

describe('the grader', () => {
  it('does not give a workspace the grade of the files its links or hard links point at', async () => {
    const task = await loadTask(await writeToyTask());
    const run = await scratch('mass-grade-links-');
    const graded = await workspace(task, run, 'graded');
    await writeFile(path.join(graded, 'results', 'metrics.json'), RIGHT);
    const other = await workspace(task, run, 'other');
    await writeFile(path.join(other, 'results', 'metrics.json'), RIGHT);
    const hostFile = path.join(await scratch('mass-grade-host-'), 'answer.json');
    await writeFile(hostFile, RIGHT);

    const relativeLink = await workspace(task, run, 'relative-link');
    await symlink(
      '../../../other/workspace/results/metrics.json',
      path.join(relativeLink, 'results', 'metrics.json'),
    );
    const absoluteLink = await workspace(task, run, 'absolute-link');
    await symlink(hostFile, path.join(absoluteLink, 'results', 'metrics.json'));
    const folderLink = await workspace(task, run, 'folder-link');
    execFileSync('rmdir', [path.join(folderLink, 'results')]);
    await symlink(path.join(other, 'results'), path.join(folderLink, 'results'));
    const hardLink = await workspace(task, run, 'hard-link');
    // (The other workspace's file has a name outside it now too: it would not be graded either.)
    await link(path.join(other, 'results', 'metrics.json'), path.join(hardLink, 'results', 'metrics.json'));

    const grades = await gradeWorkspaces(task, {
      workspaceDirs: [graded, relativeLink, absoluteLink, folderLink, hardLink],
      seed: SEED,
    });

    expect(grades.map((grade) => grade.score)).toEqual([100, 0, 0, 0, 0]);
    expect(grades[0]!.leftOut).toEqual([]);
    expect(grades[1]!.leftOut).toContainEqual({
      path: 'results/metrics.json',
      reason: 'a symbolic link, never followed or read for grading',
    });
    expect(grades[2]!.leftOut).toContainEqual(expect.objectContaining({ path: 'results/metrics.json' }));
    expect(grades[3]!.leftOut).toContainEqual(
      expect.objectContaining({ path: 'results', reason: expect.stringMatching(/symbolic link/) }),
    );
    expect(grades[4]!.leftOut).toContainEqual({
      path: 'results/metrics.json',
      reason: "a hard link with 2 names, some outside the workspace: its content is another file's",
    });
    expect(grades[1]!.parts[0]!.reason).toMatch(/results\/metrics.json unreadable/);
  });

  it('grades a workspace’s own files, tool folders and its own hard links aside, and reports what it left out', async () => {
    const task = await loadTask(await writeToyTask());
    const dir = await workspace(task, await scratch('mass-grade-own-'), 'own');
    await writeFile(path.join(dir, 'results', 'metrics.json'), RIGHT);
    await mkdir(path.join(dir, '.git', 'objects'), { recursive: true });
    // Both names in the workspace: its own file, graded.
    await link(path.join(dir, 'results', 'metrics.json'), path.join(dir, '.git', 'objects', 'ab12'));
    await writeFile(
      Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x6e, 0xff, 0x2e, 0x74])]),
      'not UTF-8',
    );

    const grade = await gradeWorkspace(task, { workspaceDir: dir, seed: SEED });

    expect(grade.score).toBe(100);
    expect(grade.leftOut).toEqual(
      expect.arrayContaining([
        { path: '.git', reason: 'a tool or cache folder, not research work' },
        { path: 'n%FF.t', reason: 'its name is not UTF-8' },
      ]),
    );
    expect(grade.leftOut!.map((entry) => entry.path)).not.toContain('results/metrics.json');
    // The workspace itself is left as it was.
    expect((await readdir(dir)).sort()).toEqual(['.git', 'data', 'n\uFFFD.t', 'results', 'sim']);
  });

  it('never opens a FIFO the team left where a result should be (it would wait for a writer forever)', async () => {
    const task = await loadTask(await writeToyTask());
    const dir = await workspace(task, await scratch('mass-grade-fifo-'), 'fifo');
    execFileSync('mkfifo', [path.join(dir, 'results', 'metrics.json')]);

    const grade = await gradeWorkspace(task, { workspaceDir: dir, seed: SEED, timeoutMs: 20_000 });

    expect(grade.score).toBe(0);
    expect(grade.leftOut).toContainEqual({
      path: 'results/metrics.json',
      reason: 'a FIFO, never followed or read for grading',
    });
  });
});

/** A toy grader of reproducibility alone, with the research suites' shared grading code. */
const REPRODUCIBILITY_GRADER = `import sys
sys.path.insert(0, ${JSON.stringify(path.join(suiteDir, '_lib'))})
from gradelib import Grader
grader = Grader("toy-task")
grader.reproducibility(1.0)
grader.emit()
`;

/** Writes the answer from the data, as the team's analysis would. */
const REPRODUCING_RUN = `import csv, json, pathlib
value = int(next(csv.DictReader(open("data/values.csv")))["value"])
pathlib.Path("results").mkdir(exist_ok=True)
pathlib.Path("results/metrics.json").write_text(json.dumps({"answer": 42, "value": value / 3}))
`;

describe('reproducibility: the entry point rerun in a fresh sandboxed copy', () => {
  it('keeps the points of a run.py that reproduces its results, takes them from one that does not, and says why', async () => {
    const manifest = minimalManifest();
    manifest.deliverables = [
      ...(manifest.deliverables as unknown[]),
      {
        id: 'entry',
        kind: 'entry-point',
        path: 'run.py',
        description: 'Reproduces.',
        command: 'python3 run.py',
      },
    ];
    const task = await loadTask(await writeToyTask(manifest, { 'oracle/grade.py': REPRODUCIBILITY_GRADER }));
    const parent = await scratch('mass-grade-rerun-');
    const finished = async (name: string, runPy: string): Promise<string> => {
      const dir = await workspace(task, parent, name);
      await writeFile(path.join(dir, 'run.py'), REPRODUCING_RUN);
      execFileSync('/usr/bin/python3', ['run.py'], { cwd: dir });
      await writeFile(path.join(dir, 'run.py'), runPy);
      return dir;
    };
    const reproduces = await finished('reproduces', REPRODUCING_RUN);
    const other = await finished('other', REPRODUCING_RUN.replace('value / 3', 'value / 4'));
    const crashes = await finished('crashes', 'raise SystemExit("no data today")\n');
    const original = path.join(reproduces, 'results', 'metrics.json');
    // Hostile: writes into the workspace it came from (not visible in its sandbox), links its result to a host file.
    const hostile = await finished(
      'hostile',
      `import os, pathlib
try:
    pathlib.Path(${JSON.stringify(original)}).write_text("{}")
except OSError as error:
    print("refused:", error)
pathlib.Path("results").mkdir(exist_ok=True)
os.symlink(${JSON.stringify(original)}, "results/metrics.json")
`,
    );
    const runner = sandboxedEntryPointRunner({ mode: 'bubblewrap' });

    const grades = await gradeWorkspaces(task, {
      workspaceDirs: [reproduces, other, crashes, hostile],
      seed: SEED,
      rerun: { runner },
    });
    const [slow] = await gradeWorkspaces(task, {
      workspaceDirs: [await finished('slow', 'import time\ntime.sleep(60)\n')],
      seed: SEED,
      rerun: { runner, timeoutSeconds: 1 },
    });

    const parts = [...grades, slow!].map((grade) => grade.parts[0]!);
    expect(parts.map((part) => part.score)).toEqual([1, 0, 0, 0, 0]);
    expect(parts[0]!.reason).toBe('the rerun reproduced 1 of 1 deliverables');
    expect(parts[1]!.reason).toMatch(
      /results\/metrics.json differs: results\/metrics.json.value: 3.333\d* vs 2.5/,
    );
    expect(parts[2]!.reason).toMatch(
      /^the rerun of the entry point failed: exited with 1; its output ended: no data today/,
    );
    expect(parts[3]!.reason).toContain('results/metrics.json not written by the rerun');
    expect(parts[4]!.reason).toBe('the rerun of the entry point failed: timed out after 1 s');
    expect(JSON.parse(await readFile(original, 'utf8'))).toEqual({ answer: 42, value: 10 / 3 });
    // Without a runner nothing is rerun, and the grader says so.
    const [unrun] = await gradeWorkspaces(task, { workspaceDirs: [reproduces], seed: SEED });
    expect(unrun!.parts[0]).toMatchObject({ score: 0, reason: expect.stringMatching(/not rerun/) });
  });
});
