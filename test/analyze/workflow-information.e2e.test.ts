import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runAnalysisScript, WORKFLOW_INFORMATION_SCRIPT } from '../../src/analyze/analysis-script.js';
import { offlineEmbedder, type Embedder } from '../../src/analyze/embeddings.js';
import { designComponents } from '../../src/workflow/workflow-components.js';
import { analyzeWorkflowInformation } from '../../src/analyze/workflow-information.js';
import {
  WorkflowInformationRecord,
  type WorkflowInformation,
} from '../../src/records/workflow-information-record.js';
import { seededRandom } from '../../src/ranking/seeded-random.js';
import { readRunForReport } from '../../src/report/read-run.js';
import { workflowInformationSection } from '../../src/report/sections/workflow-information-section.js';
import { workflowInformationPath } from '../../src/store/run-paths.js';
import { runPython } from '../../src/tasks/python.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { copySharedRun, sharedDemoSearch } from '../support/shared-runs.js';
import { topicDesign, writeSearches } from './search-fixture.js';

const directory = temporaryDirectory('mass-analyze-e2e-');
afterAll(() => directory.remove());

/** Standard normal draws from a seeded generator (Box–Muller). */
function normals(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

describe('the Gaussian mutual information of the analysis script', () => {
  it('equals the entropies SciPy computes from the same covariance, and the closed form on a large sample', async () => {
    const check = [
      'import sys, json, numpy as np',
      'from scipy.stats import multivariate_normal',
      `sys.path.insert(0, ${JSON.stringify(join(WORKFLOW_INFORMATION_SCRIPT, '..'))})`,
      'from workflow_information import gaussian_mi',
      'rng = np.random.default_rng(3)',
      'x = rng.normal(size=(400, 3)); y = x @ rng.normal(size=(3, 2)) + rng.normal(size=(400, 2))',
      'c = np.cov(np.hstack([x, y]).T)',
      'h = lambda m: multivariate_normal(cov=m).entropy()',
      'rho = 0.6',
      'z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=200000)',
      'print(json.dumps({"estimate": gaussian_mi(x, y), "scipy": h(c[:3, :3]) + h(c[3:, 3:]) - h(c),',
      '  "large": gaussian_mi(z[:, :1], z[:, 1:]), "closed": -0.5 * np.log(1 - rho ** 2)}))',
    ].join('\n');
    const run = await runPython(['-c', check], { cwd: directory.path, timeoutMs: 120_000 });
    expect(run.stderr).toBe('');
    const values = JSON.parse(run.stdout) as Record<string, number>;
    expect(values.estimate).toBeGreaterThan(0.5);
    expect(values.estimate).toBeCloseTo(values.scipy!, 6);
    expect(values.large).toBeCloseTo(values.closed!, 2);
  });
});

describe('the workflow analysis on synthetic embeddings', () => {
  const run = join(directory.path, 'synthetic');
  const tasks = Array.from({ length: 12 }, (_, index) => `task-${String.fromCharCode(97 + index)}`);
  let record: WorkflowInformation;

  /**
   * Twelve tasks, each searched v0 → v1, and an embedding that plants what the analysis should find: a contract's
   * vector is a fixed linear map of its task's vector plus noise (task information), an agent's hops are a map of
   * its role plus noise (dependence between components); roles, instructions and task vectors are independent noise.
   */
  function plantedEmbedder(): Embedder {
    const draw = normals(seededRandom(11));
    const size = 12;
    const vector = () => Array.from({ length: size }, draw);
    const map = Array.from({ length: size }, vector);
    const times = (matrix: number[][], value: number[]) =>
      matrix.map(
        (row) => row.reduce((sum, entry, index) => sum + entry * value[index]!, 0) / Math.sqrt(size),
      );
    const plus = (a: number[], b: number[], scale: number) =>
      a.map((entry, index) => entry + scale * b[index]!);
    const known = new Map<string, number[]>();
    const fixed = (text: string, make: () => number[]) => {
      if (!known.has(text)) known.set(text, make());
      return known.get(text)!;
    };
    for (const task of tasks) {
      const taskVector = fixed(`Task ${task}.`, vector);
      for (const design of [
        topicDesign(task, '', `${task}-`),
        topicDesign(task, ' Check twice.', `${task}-`),
      ]) {
        const texts = designComponents(design);
        for (const text of texts) {
          if (text.component === 'contract')
            fixed(text.text, () => plus(times(map, taskVector), vector(), 0.4));
          else if (text.component === 'hops') {
            const role = fixed(
              texts.find((other) => other.agent === text.agent && other.component === 'role')!.text,
              vector,
            );
            fixed(text.text, () => plus(times(map, role), vector(), 0.4));
          } else fixed(text.text, vector);
        }
      }
    }
    return {
      embed: async (texts) => ({
        vectors: texts.map((text) => {
          const found = known.get(text);
          if (!found) throw new Error(`no planted vector for ${JSON.stringify(text)}`);
          return found;
        }),
        method: {
          kind: 'endpoint',
          name: 'planted test vectors',
          model: 'planted',
          endpoint: null,
          dimensions: size,
        },
      }),
    };
  }

  it(
    'finds the planted task information and dependence, and about 0 where there is none',
    { timeout: 120_000 },
    async () => {
      await writeSearches(
        run,
        'L0',
        tasks.map((task) => ({
          task,
          description: `Task ${task}.`,
          designs: [
            ['v0', topicDesign(task, '', `${task}-`)],
            ['v1', topicDesign(task, ' Check twice.', `${task}-`)],
          ],
          champion: 'v1',
        })),
      );
      record = await analyzeWorkflowInformation({
        runDirectory: run,
        generation: 'L0',
        embedder: plantedEmbedder(),
      });
      expect(record.series.map((series) => series.label)).toEqual(['first', 'final', 'champion', 'v0', 'v1']);
      for (const series of record.series) {
        const information = Object.fromEntries(series.information.map((entry) => [entry.component, entry]));
        expect(information.contract!.adjusted!, series.label).toBeGreaterThan(0.3);
        expect(information.contract!.adjustedInterval![0], series.label).toBeGreaterThan(0);
        expect(information.contract!.pValue!, series.label).toBeLessThan(0.05);
        for (const component of ['role', 'instruction', 'hops'] as const) {
          const entry = information[component]!;
          expect(Math.abs(entry.adjusted!), `${series.label} ${component}`).toBeLessThan(0.2);
          // Unadjusted, independent texts still show information: the bias the baseline removes.
          expect(entry.mi!, `${series.label} ${component}`).toBeGreaterThan(0.02);
          expect(entry.baseline!, `${series.label} ${component}`).toBeGreaterThan(0.05);
          expect(entry.adjustedInterval![0]).toBeLessThan(0);
          expect(entry.adjustedInterval![1]).toBeGreaterThan(0);
        }
        const dependence = (first: string, second: string) =>
          series.dependence.find((entry) => entry.first === first && entry.second === second)!;
        expect(dependence('role', 'hops').adjusted!).toBeGreaterThan(0.3);
        expect(dependence('role', 'hops').adjustedInterval![0]).toBeGreaterThan(0);
        expect(Math.abs(dependence('role', 'instruction').adjusted!)).toBeLessThan(0.2);
        expect(dependence('role', 'contract').samples).toBe(24);
      }
      expect(record.estimator.dimensions).toEqual({
        task: 3,
        components: { role: 3, instruction: 3, contract: 3, hops: 3 },
      });
      expect(record.embedding.name).toBe('planted test vectors');
      expect(record.limits[0]).toContain('12 tasks');
      expect(await WorkflowInformationRecord.read(join(run, workflowInformationPath('L0')))).toEqual(record);
    },
  );

  it(
    'gives the same numbers for the same seed, and other shuffles for another',
    { timeout: 120_000 },
    async () => {
      const again = await analyzeWorkflowInformation({
        runDirectory: run,
        generation: 'L0',
        embedder: plantedEmbedder(),
      });
      expect(again).toEqual(record);
      const other = await analyzeWorkflowInformation({
        runDirectory: run,
        generation: 'L0',
        embedder: plantedEmbedder(),
        seed: 5,
      });
      expect(other.series[0]!.information[0]!.mi).toBe(record.series[0]!.information[0]!.mi);
      expect(other.series[0]!.information[0]!.baseline).not.toBe(record.series[0]!.information[0]!.baseline);
    },
  );

  it('refuses, in the script, an analysis of fewer than two tasks', async () => {
    await expect(
      runAnalysisScript('analyze', {
        seed: 0,
        permutations: 10,
        bootstrap: 10,
        bootstrapPermutations: 2,
        confidence: 0.95,
        vectors: [[1, 0]],
        tasks: [{ task: 'only', vector: 0 }],
        components: ['role'],
        series: [],
      }),
    ).rejects.toThrow('the analysis needs at least two tasks');
  });
});

describe('the offline embedding', () => {
  it('is deterministic, whatever the order of the texts, and puts shared wording close', async () => {
    const texts = [
      'Fit a Hill curve to the dose-response data and report the EC50.',
      'Fit a Hill curve to the dose response wells and report EC50 and slope.',
      'Estimate the annualised volatility of the daily returns.',
      'Write the report for the portfolio manager.',
      'Tune the PID gains of the robot arm controller.',
    ];
    const first = await offlineEmbedder().embed(texts);
    const second = await offlineEmbedder().embed(texts);
    const reversed = await offlineEmbedder().embed([...texts].reverse());
    expect(second).toEqual(first);
    expect([...reversed.vectors].reverse()).toEqual(first.vectors);
    expect(first.method.kind).toBe('offline');
    expect(first.method.name).toMatch(/^TF-IDF \+ truncated SVD \(scikit-learn, offline; \d+ dimensions/);
    const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);
    expect(cosine(first.vectors[0]!, first.vectors[1]!)).toBeGreaterThan(
      cosine(first.vectors[0]!, first.vectors[2]!),
    );
  });
});

describe('mass analyze workflows on a demo run’s searches', () => {
  it('analyses the searches of the toy model on the demo tasks, prints the table and the report draws it', async () => {
    // The demo's model and tasks, searched one iteration after v0 (shared-runs.ts); the analysis writes into the run.
    const search = await sharedDemoSearch();
    expect(search.result.code, search.result.stderr).toBe(0);
    const runDirectory = copySharedRun(search, join(directory.path, 'runs'));

    const printed = await runMass(['analyze', 'workflows', runDirectory]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('Where the designs of generation L0 carry their task information');
    expect(printed.stdout).toContain('Embedding: TF-IDF + truncated SVD (scikit-learn, offline;');
    expect(printed.stdout).toMatch(/^series\s+designs\s+role\s+instruction\s+contract\s+hops$/m);
    expect(printed.stdout).toContain('2 tasks: every interval is over tasks');
    expect(printed.stderr).toContain(`written to ${workflowInformationPath('L0')}`);

    const json = await runMass(['analyze', 'workflows', runDirectory, '--generation', 'L0', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const printedRecord = WorkflowInformationRecord.parse(JSON.parse(json.stdout), 'the printed JSON');
    const file = join(runDirectory, workflowInformationPath('L0'));
    expect(existsSync(file)).toBe(true);
    // The same run analysed twice gives the same record, byte for byte.
    expect(readFileSync(file, 'utf8')).toBe(WorkflowInformationRecord.serialize(printedRecord));
    expect(printedRecord.tasks.map((task) => task.task)).toEqual(['demo-potency', 'demo-volatility']);
    expect(printedRecord.series.map((series) => series.label)).toEqual([
      'first',
      'final',
      'champion',
      'v0',
      'v1',
    ]);
    const final = printedRecord.series.find((series) => series.label === 'final')!;
    expect(final.versions).toEqual([
      { task: 'demo-potency', version: 'v1' },
      { task: 'demo-volatility', version: 'v1' },
    ]);
    // Two tasks: a shuffle either keeps them or swaps them, which tells as much, so nothing is found.
    for (const entry of final.information.filter((item) => item.adjusted !== null))
      expect(entry.adjusted).toBeCloseTo(0, 6);
    expect(final.information.find((entry) => entry.component === 'contract')!.skipped).toMatch(
      /fewer than the \d+ needed/,
    );

    const wrong = await runMass(['analyze', 'workflows', runDirectory, '--generation', 'L7']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('give --generation L0');

    const markup = (await workflowInformationSection(await readRunForReport(runDirectory))).markup;
    expect(markup).toContain('id="workflow-information"');
    expect(markup).toContain('Generation L0: 2 tasks');
    expect(markup).toContain(
      'Task information per component, first design against final (TF-IDF + truncated SVD',
    );
    expect(markup).toContain('<svg');
  }, 300_000);
});
