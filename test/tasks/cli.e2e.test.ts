import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runMass } from '../support/cli.js';
import { repositoryRoot, suiteDir } from './support.js';
import { minimalManifest, removeScratch, scratch, writeToyTask } from './toy-task.js';

afterAll(removeScratch);

// Each `mass` call starts Node on the built dist/ (about a second); allow for a busy machine.
const CLI_TIMEOUT_MS = 90_000;

describe('mass tasks', { timeout: CLI_TIMEOUT_MS }, () => {
  it('lists a suite', async () => {
    const result = await runMass(['tasks', 'list', suiteDir, '--json']);
    expect(result.code).toBe(0);
    const listing = JSON.parse(result.stdout) as {
      suite: string;
      tasks: Array<{ id: string; split: string }>;
    };
    expect(listing.suite).toBe('research-12');
    expect(listing.tasks).toHaveLength(12);
    expect(listing.tasks.filter((task) => task.split === 'test').map((task) => task.id)).toEqual([
      'finance-min-variance',
      'pharmacy-treatment-effects',
      'robotics-state-estimation',
    ]);
  });

  it('validates a suite, and exits with 2 naming the file and field of a broken task', async () => {
    const good = await runMass(['tasks', 'validate', suiteDir]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('research-12: 12 tasks valid');

    const manifest = minimalManifest();
    (manifest.deliverables as Array<Record<string, unknown>>)[1]!.requiredKeys = [];
    const dir = await writeToyTask(manifest);
    const bad = await runMass(['tasks', 'validate', path.dirname(dir)]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain(`${path.join(dir, 'task.yaml')}: field "deliverables[1].requiredKeys"`);
    expect(bad.stderr).toContain('1 problem found');

    // What the task's texts must say: the grader's reads named, a review loop that finishes, no visual checks.
    const unsaid = minimalManifest();
    unsaid.oracle = { grader: 'oracle/grade.py', graded: { 'results/metrics.json': ['answer', 'interval'] } };
    (unsaid.workflow as { hops: unknown[] }).hops.splice(4);
    const unsaidDir = await writeToyTask(unsaid, {
      'prompt.md': '# Toy\n\nFind the answer; look at the plot.\n',
    });
    const flagged = await runMass(['tasks', 'validate', unsaidDir]);
    expect(flagged.code).toBe(2);
    expect(flagged.stdout).toContain('toy-task: the grader reads results/metrics.json field "interval"');
    expect(flagged.stdout).toContain('toy-task: task.yaml workflow hop 4, reviewer → analyst');
    expect(flagged.stdout).toContain('asks for a visual check ("look at the plot")');
    expect(flagged.stderr).toContain('3 problems found');
    // A served model that reads images (its run configuration says so) may be asked to look at a plot.
    const example = await readFile(path.join(repositoryRoot, 'examples', 'search.yaml'), 'utf8');
    const config = path.join(await scratch(), 'images.yaml');
    await writeFile(config, example.replace('executor: {', 'executor: { images: true,'));
    const withImages = await runMass(['tasks', 'validate', unsaidDir, '--config', config]);
    expect(withImages.stderr).toContain('2 problems found');
  });

  it('checks that generators are deterministic', async () => {
    const dir = await writeToyTask();
    const result = await runMass(['tasks', 'validate', dir, '--generators', '--seed', '4']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ toy-task \(generator deterministic, 2 files/);
  });

  it('shows the prompt exactly as the team sees it', async () => {
    const result = await runMass([
      'tasks',
      'show',
      path.join(suiteDir, 'robotics-push-planning'),
      '--prompt',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('# Pushing a puck around walls');
    expect(result.stdout).toContain('## Protected files');
    expect(result.stdout).not.toContain('oracle');
  });

  it('materialises a workspace and grades it with the seed it was made with', async () => {
    const task = await writeToyTask();
    const workspace = path.join(await scratch(), 'workspace');
    const made = await runMass(['tasks', 'materialize', task, workspace, '--seed', '9', '--json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({
      taskId: 'toy-task',
      seed: 9,
      files: ['data/values.csv', 'sim/sim.py'],
    });
    await mkdir(path.join(workspace, 'results'));
    await writeFile(path.join(workspace, 'results', 'metrics.json'), '{"answer": 42}');

    const graded = await runMass(['tasks', 'grade', task, workspace, '--seed', '9']);
    expect(graded.code).toBe(0);
    expect(graded.stdout).toContain('toy-task (seed 9): 100.0 / 100');

    const noSeed = await runMass(['tasks', 'grade', task, workspace]);
    expect(noSeed.code).not.toBe(0);
    expect(noSeed.stderr).toContain("required option '--seed <n>' not specified");
    const badSeed = await runMass(['tasks', 'grade', task, workspace, '--seed', 'seven']);
    expect(badSeed.code).toBe(2);
    expect(badSeed.stderr).toContain('--seed "seven": use a non-negative integer');
  });
});
