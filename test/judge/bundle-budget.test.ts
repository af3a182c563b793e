import { cp } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildWorkspaceBundle, DEFAULT_BUNDLE_BUDGET, type WorkspaceBundle } from '../../src/judge/index.js';
import type { TokenCounter } from '../../src/model/token-counter.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { loadResearchTask } from '../tasks/support.js';
import { removeScratchDirectories, scratch, tokenCounter, writeText } from './support.js';

let task: LoadedTask;
let counter: TokenCounter;
let workspace: string;
let defaultBundle: WorkspaceBundle;

/** Deterministic filler: numbered lines of prose, so excerpts show where they were cut. */
function prose(lines: number, label: string): string {
  return Array.from(
    { length: lines },
    (_, index) =>
      `${label} line ${index}: the controller keeps overshoot below ${index % 10} percent on scenario ${index % 40}.`,
  ).join('\n');
}

beforeAll(async () => {
  task = await loadResearchTask('robotics-pid-tuning');
  counter = await tokenCounter();
  workspace = await scratch('large');
  await cp(path.join(task.dir, 'assets/sim/servo.py'), path.join(workspace, 'sim/servo.py'), {
    recursive: true,
  });
  const sections = ['Summary', 'Data', 'Method', 'Results', 'Limitations'];
  await writeText(
    workspace,
    'research_report.md',
    sections.map((section) => `## ${section}\n\n${prose(160, section)}\n`).join('\n'),
  );
  const scenarios = Array.from({ length: 4000 }, (_, index) => ({
    id: index,
    itae: index / 7,
    passed: index % 3 > 0,
  }));
  await writeText(
    workspace,
    'results/metrics.json',
    JSON.stringify(
      { pass_rate: 0.9, worst_overshoot_pct: 4, worst_settling_time_s: 0.5, mean_itae: 0.02, scenarios },
      null,
      2,
    ),
  );
  for (let index = 0; index < 40; index++) {
    await writeText(
      workspace,
      `results/sweeps/sweep_${String(index).padStart(2, '0')}.json`,
      JSON.stringify({ index, values: prose(60, `sweep ${index}`) }),
    );
  }
  await writeText(workspace, 'run.py', `# entry point\n${prose(3000, '# step')}\nprint("done")\n`);
  await writeText(workspace, 'tests/test_controller.py', prose(2000, '# check'));
  await writeText(workspace, 'logs/progress.log', `${prose(60_000, 'progress')}\nFINAL LINE OF THE LOG\n`);
  for (let index = 0; index < 2500; index++) {
    await writeText(workspace, `data/cases/case_${String(index).padStart(4, '0')}.json`, '{}');
  }
  for (let index = 0; index < 30; index++) await writeText(workspace, `__pycache__/module_${index}.pyc`, 'x');
}, 120_000);

afterAll(removeScratchDirectories);

describe('bundle budgets on a large workspace', () => {
  it('holds every section and the whole bundle to their budgets in real tokens, and marks the cuts', async () => {
    const started = performance.now();
    const bundle = await buildWorkspaceBundle({ task, location: workspace, tokenCounter: counter });
    const elapsedMs = performance.now() - started;
    defaultBundle = bundle;

    expect(counter.count(bundle.text)).toBe(bundle.tokens);
    expect(bundle.tokens).toBeLessThanOrEqual(DEFAULT_BUNDLE_BUDGET.totalTokens);
    expect(bundle.tokens).toBeGreaterThan(DEFAULT_BUNDLE_BUDGET.totalTokens * 0.6);
    for (const section of bundle.summary.sections) {
      expect(section.tokens, section.name).toBeLessThanOrEqual(section.budgetTokens);
    }
    expect(bundle.text).toMatch(/\[… [\d,]+ tokens omitted …\]/);
    // The log is too large to read whole: its middle is counted in bytes, and its last line still shows.
    expect(bundle.text).toMatch(/\[… [\d,]+ bytes omitted …\]/);
    expect(bundle.text).toContain('FINAL LINE OF THE LOG');
    expect(bundle.text).toContain('Not shown for lack of room:');
    expect(bundle.text).toMatch(
      /[\d,]+ listed \(deliverables first, task inputs last\), 2,[\d,]+ not listed \(2,[\d,]+ in data\//,
    );
    expect(bundle.text).toContain('`__pycache__/` (30 files)');
    expect(bundle.summary.files.total).toBeGreaterThan(2500);
    expect(bundle.summary.sections.find((section) => section.name === 'report')).toMatchObject({
      truncated: true,
    });
    expect(bundle.summary.preflight.find((check) => check.id === 'report')).toMatchObject({ status: 'ok' });
    expect(bundle.text).not.toContain(workspace);
    expect(elapsedMs).toBeLessThan(30_000);
  }, 120_000);

  it('is deterministic and still fits a much smaller budget', async () => {
    const again = await buildWorkspaceBundle({ task, location: workspace, tokenCounter: counter });
    expect(again.text).toBe(defaultBundle.text);

    for (const totalTokens of [8_000, 2_000]) {
      const small = await buildWorkspaceBundle({
        task,
        location: workspace,
        tokenCounter: counter,
        budget: { totalTokens },
      });
      expect(counter.count(small.text)).toBeLessThanOrEqual(totalTokens);
      expect(small.summary.budgetScale).toBeLessThan(1);
      expect(small.text).toContain('Deliverables preflight');
    }
  }, 120_000);
});
