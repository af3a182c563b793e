import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { minimalManifest, removeScratch, writeToyTask } from './toy-task.js';
import { UserError } from '../../src/errors.js';
import { checkSuite, loadSuite } from '../../src/tasks/load-suite.js';
import { DOMAIN_JUDGES } from '../../src/tasks/judge-defaults.js';
import { gradeWorkspace, hasGrader } from '../../src/tasks/grade.js';
import { loadTask } from '../../src/tasks/load-task.js';

async function loadError(dir: string): Promise<string> {
  try {
    await loadTask(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error('expected loadTask to fail');
}

afterAll(removeScratch);

describe('loading a task folder', () => {
  it('loads the manifest and prompt, resolves the judge from the domain and lists withheld folders', async () => {
    const dir = await writeToyTask();
    const task = await loadTask(dir);
    expect(task.manifest.id).toBe('toy-task');
    expect(task.prompt).toContain('Find the answer.');
    expect(task.judge.persona).toMatch(/quantitative researcher/);
    expect(task.withheldDirs).toEqual([path.join(dir, 'oracle'), path.join(dir, 'generator')]);
  });

  it('names the file and field when YAML is malformed', async () => {
    const dir = await writeToyTask();
    await writeFile(path.join(dir, 'task.yaml'), 'schemaVersion: 1\nid: [unclosed\n');
    const message = await loadError(dir);
    expect(message).toContain(`${path.join(dir, 'task.yaml')}: not valid YAML`);
    expect(message).toContain('line');
  });

  it('names every missing file with its field, and an id that differs from the folder', async () => {
    const manifest = minimalManifest('other-name');
    manifest.prompt = { file: 'missing.md' };
    manifest.oracle = { grader: 'oracle/missing.py' };
    const dir = await writeToyTask(manifest);
    const renamed = path.join(path.dirname(dir), 'toy-task');
    await import('node:fs/promises').then((fs) => fs.rename(dir, renamed));
    const message = await loadError(renamed);
    const file = path.join(renamed, 'task.yaml');
    expect(message.split('\n')).toEqual([
      `${file}: field "id": "other-name" differs from its folder name "toy-task"; rename one so they match`,
      `${file}: field "prompt.file": "missing.md" does not exist in the task folder`,
      `${file}: field "oracle.grader": "oracle/missing.py" does not exist in the task folder`,
    ]);
  });

  it('requires a judge persona and lens for a domain without built-in defaults', async () => {
    const manifest = minimalManifest();
    manifest.domain = 'astronomy';
    const message = await loadError(await writeToyTask(manifest));
    expect(message).toContain(
      'field "judge": domain "astronomy" has no built-in judge; set judge.persona and judge.lens',
    );
    manifest.judge = { persona: 'an astronomer', lens: 'look at the light curves first' };
    const task = await loadTask(await writeToyTask(manifest));
    expect(task.judge).toEqual({
      persona: 'an astronomer',
      lens: 'look at the light curves first',
      focus: null,
    });
  });

  it('refines the lens with the task’s judge.focus, the domain’s lens kept', async () => {
    const manifest = minimalManifest();
    manifest.judge = { focus: 'which prices are stale' };
    const task = await loadTask(await writeToyTask(manifest));
    expect(task.judge).toEqual({ ...DOMAIN_JUDGES.finance, focus: 'which prices are stale' });
  });

  it('loads a task without a grader, which grading then refuses before starting anything', async () => {
    const manifest = minimalManifest();
    delete manifest.oracle;
    const dir = await writeToyTask(manifest);
    await rm(path.join(dir, 'oracle'), { recursive: true });
    const task = await loadTask(dir);
    expect(task.manifest.oracle).toBeUndefined();
    expect(hasGrader(task)).toBe(false);
    await expect(gradeWorkspace(task, { workspaceDir: dir, seed: 1 })).rejects.toThrow(
      /task toy-task has no grader: its task\.yaml names no grader/,
    );
  });

  it('says what to do when the folder has no task.yaml', async () => {
    const dir = await writeToyTask();
    const message = await loadError(path.dirname(dir));
    expect(message).toMatch(/task\.yaml: file not found\. A task folder holds a task\.yaml/);
  });
});

describe('loading a suite', () => {
  it('reports each task folder as loaded or failed, and loadSuite lists every problem', async () => {
    const good = await writeToyTask();
    const suiteDir = path.dirname(good);
    const bad = minimalManifest('broken-task');
    bad.split = 'holdout';
    const badDir = await writeToyTask(bad);
    await import('node:fs/promises').then((fs) => fs.rename(badDir, path.join(suiteDir, 'broken-task')));
    await writeFile(
      path.join(suiteDir, 'suite.yaml'),
      'schemaVersion: 1\nname: toy-suite\nwithheld: [_lib]\n',
    );

    const check = await checkSuite(suiteDir);
    expect(check.name).toBe('toy-suite');
    expect(check.outcomes.map((outcome) => [path.basename(outcome.dir), outcome.ok])).toEqual([
      ['broken-task', false],
      ['toy-task', true],
    ]);
    const loaded = check.outcomes.find((outcome) => outcome.ok);
    expect(loaded?.ok && loaded.task.withheldDirs).toContain(path.join(suiteDir, '_lib'));
    await expect(loadSuite(suiteDir)).rejects.toThrow(/field "split"/);
  });
});
