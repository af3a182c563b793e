import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { renderComparePage } from '../../src/compare/compare-page.js';
import { describeComparison } from '../../src/compare/compare-table.js';
import { readComparedRuns, rolesOf, type ComparedRun } from '../../src/compare/compared-run.js';
import { loadRunConfig, RunConfig } from '../../src/config/run-config.js';
import { UserError } from '../../src/errors.js';
import { EvaluationSummaryRecord } from '../../src/records/evaluation-records.js';
import { outsideGenerationCoverage } from '../../src/records/search-coverage-figure.js';
import { TaskSearchRecord } from '../../src/records/search-records.js';
import { HOSTILE_TASK, PLAIN_TASK, writeSyntheticRun } from '../report/synthetic-run.js';
import { searchRecord } from '../evaluate/search-records.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

let root: string;
let base: string;
let ablation: string;
let runs: ComparedRun[];

/** Run A: the report's synthetic run (every role one model), with an evaluation that judged its searches from outside. */
async function writeBaseRun(directory: string): Promise<void> {
  await writeSyntheticRun(directory);
  const file = join(directory, 'evaluation', 'final', 'summary.json');
  const summary = await EvaluationSummaryRecord.read(file);
  const coverage = outsideGenerationCoverage({
    generation: 'L0',
    confidence: 0.95,
    unfinished: [],
    tasks: [
      {
        task: PLAIN_TASK,
        iterationsRun: 4,
        loopFirstWin: 0,
        versions: [
          { iteration: 0, version: 'v0', episodeFailed: false, outcomes: ['win', 'tie'] },
          { iteration: 1, version: 'v1', episodeFailed: false, outcomes: ['win', 'win'] },
        ],
      },
      {
        task: HOSTILE_TASK,
        iterationsRun: 4,
        loopFirstWin: 0,
        versions: [{ iteration: 0, version: 'v0', episodeFailed: false, outcomes: ['loss', 'loss'] }],
      },
    ],
  });
  await EvaluationSummaryRecord.write(file, {
    ...summary,
    searchCoverage: {
      confidence: 0.95,
      judges: ['claude'],
      judgeSeeds: 1,
      generations: [coverage],
      counts: { judgments: 6, failedJudgments: 0, failedEpisodes: 0 },
    },
  });
}

/** Run B: the same name, an external judge, three searches of its own and one that has not finished. */
async function writeAblationRun(directory: string): Promise<void> {
  const config = RunConfig.parse({
    name: 'synthetic',
    suite: 'suites/demo',
    roles: {
      executor: { model: 'base-model', baseUrl: 'http://127.0.0.1:8000/v1' },
      judge: { provider: 'anthropic', model: 'strong-judge', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    },
  });
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'config.yaml'), YAML.stringify(config));
  const histories: Record<string, string[]> = {
    a: ['v0', 'v0', 'v0', 'v0'],
    b: ['reference', 'v1', 'v2', 'v2'],
    c: ['reference', 'reference', 'reference', 'reference'],
  };
  for (const [task, history] of Object.entries(histories)) {
    await TaskSearchRecord.write(
      join(directory, 'search', 'L0', task, 'result.json'),
      searchRecord('L0', task, history),
    );
  }
  await mkdir(join(directory, 'search', 'L0', 'still-running'), { recursive: true });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-compare-'));
  base = join(root, 'base');
  ablation = join(root, 'ablation');
  await writeBaseRun(base);
  await writeAblationRun(ablation);
  runs = await readComparedRuns([base, ablation]);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('mass compare reads each run’s searches, roles and outside coverage', () => {
  it('labels runs that share a name by their folder, and names who played each role', () => {
    expect(runs.map((run) => run.label)).toEqual([`synthetic (${base})`, `synthetic (${ablation})`]);
    expect(runs.map((run) => run.roles)).toEqual([
      { executor: 'base-model', judge: 'the executor', optimizer: 'the executor' },
      { executor: 'base-model', judge: 'strong-judge (anthropic)', optimizer: 'the executor' },
    ]);
  });

  it('per generation: the loop’s own coverage from result.json, and an evaluation’s outside coverage', () => {
    const [a, b] = runs;
    expect(a!.generations.map((generation) => generation.generation)).toEqual(['L0']);
    // The synthetic searches keep v0 as champion after iteration 0, then v1.
    expect(a!.generations[0]!.loop.curve.map((point) => point.won)).toEqual([2, 2, 2, 2]);
    expect(a!.generations[0]!.outside.map((entry) => [entry.evaluation, entry.coverage.summary.won])).toEqual(
      [['final', 1]],
    );
    const own = b!.generations[0]!.loop;
    expect(own.tasks.map((task) => [task.task, task.firstWin, task.championChanges])).toEqual([
      ['a', 0, 1],
      ['b', 1, 2],
      ['c', null, 0],
    ]);
    expect(own.curve.map((point) => `${point.won}/${point.tasks}`)).toEqual(['1/3', '2/3', '2/3', '2/3']);
    expect(b!.generations[0]!.outside).toEqual([]);
    expect(b!.notes).toEqual([
      'search/L0/still-running/result.json is missing: this search has not finished',
    ]);
  });

  it('prints one row per run, generation and measure, and the curves as tasks won by iteration', () => {
    const text = describeComparison(runs);
    expect(text).toContain('strong-judge (anthropic)');
    const rows = text.split('\n');
    const row = (run: string, measure: string) =>
      rows.find((line) => line.includes(run) && line.includes(measure) && line.includes('of'))!;
    expect(row(ablation, "loop's own judge")).toMatch(/2 of 3 \(1 censored\)\s+1 \[0, > 3\]\s+1\.00 \[/);
    expect(row(base, 'external judges (evaluation final)')).toMatch(/1 of 2 \(1 censored\)/);
    const curve = rows.find((line) => line.includes(ablation) && line.includes('1/3'))!;
    expect(curve).toMatch(/1\/3\s+2\/3\s+2\/3\s+2\/3$/);
    expect(text).toContain(`${runs[1]!.label}: search/L0/still-running/result.json is missing`);
  });

  it('writes an inert page: escaped text, no script, the report’s content security policy', async () => {
    const markup = await renderComparePage(runs, new Date('2026-01-01T00:00:00Z'));
    expect(markup).toContain('http-equiv="Content-Security-Policy"');
    expect(markup).toContain('script-src &#39;none&#39;');
    expect(markup).not.toMatch(/<script/i);
    expect(markup).not.toContain('<img src=x');
    expect(markup).toContain('task&lt;img src=x onerror=window.__pwned=1&gt;');
    expect(markup).toContain('Tasks with a winning design by search iteration, L0');
    expect(markup).toContain('<svg');
  });

  it('refuses a folder that is not a run, naming it', async () => {
    const empty = join(root, 'empty');
    await mkdir(empty);
    await expect(readComparedRuns([empty])).rejects.toThrow(UserError);
    await expect(readComparedRuns([empty])).rejects.toThrow(`${join(empty, 'config.yaml')} is missing`);
    await expect(readComparedRuns([join(root, 'nowhere')])).rejects.toThrow('is not a directory');
  });
});

describe('the Figure 7 example configurations', () => {
  it('parse, with the stronger model as the judge, then as the judge and the optimizer', async () => {
    const judge = await loadRunConfig(join(examples, 'ablation-strong-judge.yaml'));
    const both = await loadRunConfig(join(examples, 'ablation-strong-judge-optimizer.yaml'));
    const plain = await loadRunConfig(join(examples, 'search.yaml'));
    expect(rolesOf(plain)).toEqual({
      executor: 'Qwen/Qwen3-8B',
      judge: 'the executor',
      optimizer: 'the executor',
    });
    expect(rolesOf(judge)).toEqual({
      executor: 'Qwen/Qwen3-8B',
      judge: 'claude-sonnet-4-5 (anthropic)',
      optimizer: 'the executor',
    });
    expect(rolesOf(both)).toEqual({
      executor: 'Qwen/Qwen3-8B',
      judge: 'claude-sonnet-4-5 (anthropic)',
      optimizer: 'claude-sonnet-4-5 (anthropic)',
    });
    // Comparable with the base run: the same suite, seed and search settings.
    for (const config of [judge, both]) {
      expect([config.suite, config.seed, config.search]).toEqual([plain.suite, plain.seed, plain.search]);
    }
    const text = await readFile(join(examples, 'ablation-strong-judge.yaml'), 'utf8');
    expect(text).toContain(
      'mass compare runs/qwen3-search runs/qwen3-strong-judge runs/qwen3-strong-judge-optimizer',
    );
  });
});
