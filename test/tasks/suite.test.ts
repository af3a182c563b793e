import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadSuite, type LoadedSuite } from '../../src/tasks/index.js';
import { Workflow } from '../../src/workflow/workflow.js';
import { RESEARCH_12_TASK_IDS, referenceSolutionsDir, suiteDir } from './support.js';

let suite: LoadedSuite;
const loaded = loadSuite(suiteDir).then((value) => (suite = value));

describe('the research-12 suite', () => {
  it('has twelve valid tasks, four per domain, nine train and three test with one test task per domain', async () => {
    await loaded;
    expect(suite.name).toBe('research-12');
    expect(suite.tasks.map((task) => task.manifest.id)).toEqual([...RESEARCH_12_TASK_IDS]);
    for (const domain of ['finance', 'pharmacy', 'robotics']) {
      const tasks = suite.tasks.filter((task) => task.manifest.domain === domain);
      expect(tasks).toHaveLength(4);
      expect(tasks.filter((task) => task.manifest.split === 'test')).toHaveLength(1);
    }
    expect(suite.tasks.filter((task) => task.manifest.split === 'train')).toHaveLength(9);
  });

  it('gives every task generated data, a withheld grader, a reference solution and the shared deliverables', async () => {
    await loaded;
    for (const task of suite.tasks) {
      const { manifest } = task;
      expect(manifest.inputs.generator?.script).toBe('generator/generate.py');
      expect(manifest.oracle?.grader).toBe('oracle/grade.py');
      expect((await stat(path.join(referenceSolutionsDir, manifest.id, 'run.py'))).isFile()).toBe(true);
      const kinds = manifest.deliverables.map((deliverable) => deliverable.kind);
      for (const kind of ['report', 'metrics-json', 'ablation-json', 'plot', 'entry-point'] as const) {
        expect(kinds, `${manifest.id} lacks a ${kind}`).toContain(kind);
      }
      expect(manifest.deliverables.find((deliverable) => deliverable.kind === 'entry-point')?.path).toBe(
        'run.py',
      );
      expect(task.withheldDirs).toContain(path.join(suiteDir, '_lib'));
    }
  });

  it('ships initial workflows of 3 to 6 agents whose subagents all have contracts with checks', async () => {
    await loaded;
    for (const { manifest } of suite.tasks) {
      const { agents, hops } = Workflow.parse(manifest.workflow);
      expect(agents.length).toBeGreaterThanOrEqual(3);
      expect(agents.length).toBeLessThanOrEqual(6);
      for (const agent of agents.filter((candidate) => candidate.kind === 'subagent')) {
        expect(agent.contract?.checks.length, `${manifest.id}/${agent.id}`).toBeGreaterThan(0);
      }
      expect(
        hops.some((hop) => hop.condition),
        `${manifest.id} has no conditional (re-work) hop`,
      ).toBe(true);
    }
  });

  it('protects the simulators of the simulator-based robotics tasks', async () => {
    await loaded;
    const protectedByTask = Object.fromEntries(
      suite.tasks.map((task) => [task.manifest.id, task.manifest.protected]),
    );
    expect(protectedByTask['robotics-pid-tuning']).toEqual(['sim/servo.py']);
    expect(protectedByTask['robotics-push-planning']).toEqual(['sim/push_sim.py']);
  });

  it('points every task.yaml at the committed JSON Schema for editors', async () => {
    await loaded;
    for (const task of suite.tasks) {
      const firstLine = (await readFile(task.manifestPath, 'utf8')).split('\n')[0];
      expect(firstLine).toBe('# yaml-language-server: $schema=../../task-manifest.schema.json');
    }
  });
});
