import { cp, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadTask, runPython, type LoadedTask } from '../../src/tasks/index.js';

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
export const suiteDir = path.join(repositoryRoot, 'suites', 'research-12');
export const referenceSolutionsDir = fileURLToPath(new URL('./reference-solutions', import.meta.url));

export const RESEARCH_12_TASK_IDS = [
  'finance-garch-volatility',
  'finance-min-variance',
  'finance-pairs-trading',
  'finance-signal-timing',
  'pharmacy-dose-response',
  'pharmacy-population-pk',
  'pharmacy-treatment-effects',
  'pharmacy-virtual-screening',
  'robotics-grid-planning',
  'robotics-pid-tuning',
  'robotics-push-planning',
  'robotics-state-estimation',
] as const;

export function loadResearchTask(taskId: string): Promise<LoadedTask> {
  return loadTask(path.join(suiteDir, taskId));
}

export async function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `mass-tasks-${prefix}-`));
}

export type ReferenceFlaw = 'careful' | 'careless' | { trap: string };

/**
 * Copies the task's reference solution (and the shared helper) into each workspace and runs it there as an agent
 * would, `python3 run.py` in the workspace root: `careless` makes it fall into every trap of the task, `{ trap }` into
 * that one alone (`run.py --trap <name>`). The runs go one after another in one Python (run_variants.py), which
 * imports numpy, pandas, scipy and matplotlib once for all of them.
 */
export async function runReferenceSolutions(
  taskId: string,
  runs: Array<{ workspaceDir: string; flaw: ReferenceFlaw }>,
): Promise<void> {
  const solutionDir = path.join(referenceSolutionsDir, taskId);
  const common = path.join(referenceSolutionsDir, '_common');
  for (const { workspaceDir } of runs) {
    for (const entry of await readdir(solutionDir)) {
      await cp(path.join(solutionDir, entry), path.join(workspaceDir, entry), { recursive: true });
    }
    await cp(path.join(common, 'refkit.py'), path.join(workspaceDir, 'refkit.py'));
  }
  const variants = runs.map(({ workspaceDir, flaw }) => ({
    workspace: workspaceDir,
    args: flaw === 'careful' ? [] : flaw === 'careless' ? ['--careless'] : ['--trap', flaw.trap],
  }));
  const run = await runPython([path.join(common, 'run_variants.py'), JSON.stringify(variants)], {
    cwd: runs[0]!.workspaceDir,
    timeoutMs: 120_000 * runs.length,
  });
  if (run.exitCode !== 0) {
    throw new Error(`reference solutions of ${taskId} failed (${run.exitCode}):\n${run.stderr.slice(-3000)}`);
  }
}

/** Runs at most `limit` of the returned function's tasks at once, in call order. */
export function limitConcurrency(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}
