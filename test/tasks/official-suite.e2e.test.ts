import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { EvaluationSummaryRecord } from '../../src/records/evaluation-records.js';
import { noGradedTaskReason } from '../../src/records/evaluation-statistics/index.js';
import { TaskSearchRecord } from '../../src/records/search-records.js';
import { TeamDesign, Workflow } from '../../src/workflow/workflow.js';
import { BASE_TOY_WEIGHTS, saveToyWeights } from '../../src/toy/weights.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const checkout = fileURLToPath(new URL('../fixtures/official-checkout', import.meta.url));

/**
 * The paper's own tasks, as a user brings them: a suite imported from a checkout in the official layout (here a
 * synthetic one), validated, one task searched on the toy model from its free-text v0 to a structured design, and
 * evaluated without a grader.
 */
describe('a suite imported from the official layout', () => {
  const directory = temporaryDirectory();
  const suite = join(directory.path, 'official');
  const runs = join(directory.path, 'runs');
  const runDirectory = join(runs, 'official-toy');
  const configFile = join(directory.path, 'official.yaml');

  beforeAll(() => {
    writeFileSync(
      configFile,
      [
        'name: official-toy',
        `suite: ${suite}`,
        'tasks: [query11]',
        'model: { kind: toy }',
        'roles: { executor: { model: toy-L0 } }',
        'budgets: { episodeTimeoutSeconds: 150 }',
        'search: { iterations: 1 }',
        'rsi: { servedAs: "toy-{generation}" }',
        'evaluation:',
        '  tasks: [query11]',
        '  rollouts: 1',
        '  judgeSeeds: 1',
        '  selfJudge: false',
        '  judges: [{ model: toy-judge, name: toy }]',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => directory.remove());

  it('imports and validates', async () => {
    const imported = await runMass(['tasks', 'import-official', checkout, '--out', suite]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(
      /3 tasks \(2 train, 1 test\), no graders, with the official teacher directive/,
    );
    expect(imported.stdout).toMatch(
      /query21 .*\n\s+not in the official post-training set\n\s+excluded from teacher collection/,
    );
    const validated = await runMass(['tasks', 'validate', suite]);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    expect(validated.stdout).toContain('official: 3 tasks valid');
    const again = await runMass(['tasks', 'import-official', checkout, '--out', suite]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/not empty/);
  });

  it('searches a task on the toy model from its free-text v0 to a structured design', async () => {
    const searched = await runMass(['search', '--config', configFile, '--runs', runs]);
    expect(searched.code, searched.stdout + searched.stderr).toBe(0);
    const searchDir = join(runDirectory, 'search', 'L0', 'query11');
    const record = await TaskSearchRecord.read(join(searchDir, 'result.json'));
    const team = readFileSync(join(suite, 'query11', 'team.md'), 'utf8');
    const v0 = TeamDesign.parse(JSON.parse(readFileSync(join(searchDir, 'v0', 'workflow.json'), 'utf8')));
    expect(v0).toEqual({ schemaVersion: 1, text: team });
    const v1 = Workflow.parse(JSON.parse(readFileSync(join(searchDir, 'v1', 'workflow.json'), 'utf8')));
    expect(v1.agents.map((agent) => agent.id)).toEqual([
      'agent-orchestrator',
      'agent-data-engineer',
      'agent-econometrician',
    ]);
    // The v0 episode saw the team as given, after the bare query; its network allowed the hosts the task names.
    const [, first] = record.iterations;
    expect(first?.episode?.status).toBe('success');
    const v0Episode = join(runDirectory, record.iterations[0]!.episode!.dir);
    const prompt = readFileSync(join(v0Episode, 'prompt.md'), 'utf8');
    expect(prompt).toContain(`\n\n${team.trimEnd()}\n`);
    expect(prompt.split('Use uv for all Python workflows')).toHaveLength(2);
    const episode = await EpisodeRecord.read(join(v0Episode, 'episode.json'));
    expect(episode.egress?.allow).toEqual(expect.arrayContaining(['fred.stlouisfed.org', 'pypi.org']));
  }, 600_000);

  // The paper's own tasks have no objective grader: the evaluation rests on the judge and says so in summary.json, in
  // the terminal summary and in the report, where every grade figure is left out with its reason.
  it('evaluates without a grader, on the judges alone, saying so in summary.json, the terminal summary and the report', async () => {
    const registry = await ModelRegistry.open(runDirectory);
    const base = join(runDirectory, 'train', 'L0', 'toy-weights.json');
    const next = join(runDirectory, 'train', 'L1', 'toy-weights.json');
    await saveToyWeights(base, BASE_TOY_WEIGHTS);
    await saveToyWeights(next, { ...BASE_TOY_WEIGHTS, generation: 1, delegateBare: 1, completeReport: 1 });
    await registry.addBase({ model: base, servedAs: 'toy-L0' });
    await registry.add({
      name: 'L1',
      parent: 'L0',
      mergedPath: next,
      datasetId: 'by-hand',
      servedAs: 'toy-L1',
    });
    const evaluated = await runMass(['eval', '--config', configFile, '--runs', runs]);
    expect(evaluated.code, evaluated.stdout + evaluated.stderr).toBe(0);
    expect(evaluated.stdout).toContain(`Grading: No task in this evaluation has an objective grader`);
    expect(evaluated.stdout).toContain(`Left out: ${noGradedTaskReason}`);
    // No grade per token and no ratio of it, not even as a dash.
    expect(evaluated.stdout).toMatch(/L1 \(toy\)\s+bare\s+\d+ tokens\n/);
    expect(evaluated.stdout).not.toContain('– per 1,000');

    const evaluationDir = join(runDirectory, 'evaluation', 'default');
    const summary = await EvaluationSummaryRecord.read(join(evaluationDir, 'summary.json'));
    const { grading } = summary.figures;
    expect(grading).toMatchObject({
      tasksWithGrader: [],
      tasksWithoutGrader: ['query11'],
      rolloutsWithoutGrader: 2,
    });
    expect(grading.note).toBe(
      `No task in this evaluation has an objective grader: the evaluation rests on the external judges.`,
    );
    expect(grading.omitted.map((entry) => entry.figure)).toEqual([
      'oracle-win-rates',
      'grades',
      'grade-differences',
      'grade-per-token',
      'oracle-agreement',
    ]);
    expect(summary.inputs.tasksWithoutGrader).toEqual(['query11']);
    // Nothing was graded, and nothing was counted as a failed grade.
    expect(summary.counts).toMatchObject({ episodes: 2, grades: 0, failedGrades: 0 });
    expect(
      existsSync(join(evaluationDir, 'grades.jsonl'))
        ? readFileSync(join(evaluationDir, 'grades.jsonl'), 'utf8')
        : '',
    ).toBe('');
    expect(summary.figures.grades).toEqual([]);
    expect(summary.figures.gradeDifferences).toEqual([]);
    // The judge's figures stand: the toy judge judged the pair in both orders.
    const judges = summary.figures.winRates[0]!.judges;
    expect(judges.map((judge) => judge.judge)).toEqual(['toy']);
    expect(judges[0]!.pooled.judgments.count).toBe(2);
    expect(judges[0]!.pooled.pairs).toBe(1);

    const out = join(directory.path, 'report.html');
    const reported = await runMass(['report', runDirectory, '--out', out]);
    expect(reported.code, reported.stderr).toBe(0);
    const text = readFileSync(out, 'utf8')
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ');
    expect(text).toContain(
      `Grading: No task in this evaluation has an objective grader: the evaluation rests on the external judges.`,
    );
    for (const title of ['Mean oracle grade', 'Grade per 1,000 output tokens', 'The oracle’s win rate']) {
      expect(text).toContain(`${title} is left out: ${noGradedTaskReason}.`);
    }
    expect(text).not.toContain('Mean oracle grade: nothing to draw yet');
  }, 600_000);
});
