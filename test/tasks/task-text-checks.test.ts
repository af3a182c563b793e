import { afterAll, describe, expect, it } from 'vitest';

import { loadTask } from '../../src/tasks/index.js';
import { taskTextProblems } from '../../src/tasks/task-text-checks.js';
import { minimalManifest, removeScratch, writeToyTask } from './toy-task.js';

afterAll(removeScratch);

/** The toy task with a data README and its grader's declared reads. */
function manifest(graded: Record<string, string[]>): Record<string, unknown> {
  const toy = minimalManifest();
  const inputs = toy.inputs as { files: Array<{ from: string; to: string }> };
  inputs.files.push({ from: 'assets/README.md', to: 'data/README.md' });
  toy.oracle = { grader: 'oracle/grade.py', graded };
  return toy;
}

async function problemsOf(
  graded: Record<string, string[]>,
  files: Record<string, string>,
  images = false,
): Promise<string[]> {
  const task = await loadTask(
    await writeToyTask(manifest(graded), {
      'assets/README.md': '# Data\n\n`values.csv`: seed and value.\n',
      ...files,
    }),
  );
  return taskTextProblems(task, { images });
}

describe('mass tasks validate: what the task texts must say', () => {
  it('names the task, file and field of every grader read that neither the prompt nor the data README names', async () => {
    const problems = await problemsOf(
      {
        'results/metrics.json': ['answer', 'interval_low', 'value'],
        'results/ablation.json': ['variants'],
        'research_report.md': [],
      },
      { 'prompt.md': '# Toy task\n\nFind the answer and its `interval_low`.\n' },
    );
    expect(problems).toEqual([
      'toy-task: the grader reads results/ablation.json (oracle.graded), which neither the prompt nor data/README.md names',
      'toy-task: the grader reads results/ablation.json field "variants" (oracle.graded), which neither the prompt nor data/README.md names: say what it holds where the team reads the task',
    ]);
  });

  it("names the paths the grader's source reads that task.yaml does not declare", async () => {
    const grader =
      'import json\nmetrics = json.load(open(root / "results/metrics.json"))\nrows = open(root / \'results/extra.csv\')\n';
    const problems = await problemsOf(
      { 'results/metrics.json': [] },
      { 'oracle/grade.py': grader, 'prompt.md': '# Toy\n\nWrite `results/extra.csv` too.\n' },
    );
    expect(problems).toEqual([
      'toy-task: oracle/grade.py reads results/extra.csv, which oracle.graded does not declare: list it with the fields the grader checks',
    ]);
  });

  it('counts a field as named only as a whole word', async () => {
    const problems = await problemsOf(
      { 'results/metrics.json': ['low'] },
      { 'prompt.md': '# Toy task\n\nGive `interval_low` and the flow.\n' },
    );
    expect(problems).toEqual([expect.stringContaining('results/metrics.json field "low"')]);
  });

  it('flags texts that ask for a visual check when the model takes no images, and not when it does', async () => {
    const files = { 'prompt.md': '# Toy task\n\nFind the answer; look at the curves to be sure.\n' };
    expect(await problemsOf({}, files)).toEqual([
      'toy-task: prompt.md asks for a visual check ("look at the curves"), but the model takes no images: ask for a check on numbers instead (or validate with --images when the served model reads images)',
    ]);
    expect(await problemsOf({}, files, true)).toEqual([]);
  });

  it("reports the design's unfinishable review loop with its hop", async () => {
    const toy = minimalManifest();
    const workflow = toy.workflow as { hops: unknown[] };
    workflow.hops = workflow.hops.slice(0, 4); // no re-review after the reviewer's rejection
    const task = await loadTask(await writeToyTask(toy));
    expect(await taskTextProblems(task, { images: false })).toEqual([
      'toy-task: task.yaml workflow hop 4, reviewer → analyst (only if approved is false): no hop after it leads from analyst back to reviewer, so the fixed work is never reviewed again; add the re-review to the call order',
    ]);
  });
});
