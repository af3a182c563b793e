import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import {
  EvaluationSummaryRecord,
  JudgmentRow,
  type EvaluationSummary,
} from '../../src/evaluate/evaluation-records.js';
import { ChatMessage } from '../../src/model/types.js';
import { TaskSearchRecord, type TaskSearchResult } from '../../src/search/search-records.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { judgeTurn } from '../../src/toy/toy-judge.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const TASK = 'demo-volatility';

/** A search on the toy model, one task, one iteration after v0; `judge`: a judge of its own (the ablation). */
const configText = (name: string, judge: string | null) =>
  [
    `name: ${name}`,
    `suite: ${DEMO_SUITE}`,
    `tasks: [${TASK}]`,
    'model: { kind: toy }',
    'roles:',
    '  executor: { model: toy-L0 }',
    ...(judge ? [`  judge: { model: strong-judge, baseUrl: "${judge}" }`] : []),
    'search: { iterations: 1 }',
    'budgets: { episodeTimeoutSeconds: 150 }',
    'concurrency: { episodes: 3, judgments: 2, tasks: 1 }',
    'rsi: { servedAs: "toy-{generation}" }',
    // The evaluation judges the base run's searches from outside, by the toy judge with one seed, and nothing else:
    // `comparisons: []` runs no episode and needs no registered generation (a `mass search` run has none).
    'evaluation:',
    '  comparisons: []',
    '  judgeSeeds: 1',
    '  selfJudge: false',
    '  judges: [{ model: toy-judge, name: toy }]',
    '  searchCoverage: true',
    '',
  ].join('\n');

/**
 * Figure 7 by command, kept short: two searches on the toy model (every role the toy; the judge a "stronger" one on a
 * scripted server that judges as the toy judge does), an evaluation of the first with `searchCoverage`, then
 * `mass compare` of both. Everything asserted is read back from what the commands recorded.
 */
describe('mass compare of two searches, one judged from outside', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const base = join(runs, 'base');
  const ablation = join(runs, 'strong-judge');
  const page = join(directory.path, 'figure-7.html');
  let judge: ScriptedServer;
  let summary: EvaluationSummary;
  let searches: { base: TaskSearchResult; ablation: TaskSearchResult };
  const configFile = (name: string) => join(directory.path, `${name}.yaml`);

  beforeAll(async () => {
    judge = await startScriptedServer({
      models: ['strong-judge'],
      responder: (request) =>
        judgeTurn(ChatMessage.array().parse((request.body as { messages: unknown[] }).messages)),
    });
    writeFileSync(configFile('base'), configText('base', null));
    writeFileSync(configFile('strong-judge'), configText('strong-judge', judge.baseUrl));
  });
  afterAll(async () => {
    await judge?.close();
    directory.remove();
  });

  it('searches both runs, then evaluates the first with searchCoverage: one judgment step per version', async () => {
    const search = (name: string) =>
      runMass(['search', '--config', configFile(name), '--runs', runs, '--skip-doctor']);
    // The ablation's search runs while the base run is searched and evaluated.
    const ablationSearched = search('strong-judge');
    const baseSearched = await search('base');
    expect(baseSearched.code, baseSearched.stderr).toBe(0);

    const evaluated = await runMass([
      'eval',
      '--config',
      configFile('base'),
      '--runs',
      runs,
      '--skip-doctor',
    ]);
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(evaluated.stderr).toContain('search coverage: every version judged against its search');
    // The terminal summary gives the curve alone: no episode ran, so there is no win rate to print.
    expect(evaluated.stdout).toContain("Search coverage (the paper's Figure 4)");
    expect(evaluated.stdout).toMatch(/^ {2}L0: 0: [01]\/1/m);
    expect(evaluated.stdout).not.toContain('Win rate');

    const ablationResult = await ablationSearched;
    expect(ablationResult.code, ablationResult.stderr).toBe(0);
    searches = {
      base: await TaskSearchRecord.read(join(base, 'search', 'L0', TASK, 'result.json')),
      ablation: await TaskSearchRecord.read(join(ablation, 'search', 'L0', TASK, 'result.json')),
    };
    // The ablation's verdicts came from its own judge.
    expect(judge.requests.length).toBeGreaterThan(0);
    summary = await EvaluationSummaryRecord.read(join(base, 'evaluation', 'default', 'summary.json'));

    const database = new Database(join(base, 'mass.db'), { readonly: true });
    const keys = (
      database.prepare("SELECT key, status FROM steps WHERE key LIKE '%/search-coverage/%'").all() as Array<{
        key: string;
        status: string;
      }>
    ).sort((a, b) => a.key.localeCompare(b.key));
    database.close();
    const judgedVersions = searches.base.iterations.filter(
      (iteration) => iteration.episode?.status === 'success',
    );
    expect(keys).toEqual(
      judgedVersions.map((iteration) => ({
        key: `evaluation/default/search-coverage/L0/${TASK}/${iteration.version}/toy/0`,
        status: 'done',
      })),
    );
  }, 300_000);

  it('records each version’s judgments against the reference in judgments.jsonl, apart from the evaluation’s figures', () => {
    const rows = readFileSync(join(base, 'evaluation', 'default', 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JudgmentRow.parse(JSON.parse(line)));
    const coverageRows = rows.filter((row) => row.sample === 'search-coverage L0');
    const judgedVersions = searches.base.iterations.filter(
      (iteration) => iteration.episode?.status === 'success',
    );
    // Both A/B orders per judge and seed (the evaluation's orders: both).
    expect(coverageRows).toHaveLength(judgedVersions.length * 2);
    for (const row of coverageRows) {
      expect([row.task, row.condition, row.baseline, row.baselineEpisode, row.judge]).toEqual([
        TASK,
        'search',
        'reference',
        searches.base.reference.episodeId,
        'toy',
      ]);
      const iteration = searches.base.iterations[row.replicate]!;
      expect([row.candidate, row.candidateEpisode]).toEqual([
        iteration.version,
        iteration.episode!.episodeId,
      ]);
    }
    // The searches alone were judged: no episode ran, and the evaluation's own figures have nothing in them.
    expect(coverageRows).toHaveLength(rows.length);
    expect(summary.inputs.judgedPairs).toEqual([]);
    expect([summary.counts.episodes, summary.counts.judgments, summary.models]).toEqual([0, 0, []]);
    expect(existsSync(join(base, 'evaluation', 'default', 'episodes'))).toBe(false);

    // The figure: per version the tally of those rows; the first win is the first unanimous version.
    const figure = summary.searchCoverage!;
    expect([figure.judges, figure.judgeSeeds, figure.counts.judgments]).toEqual([
      ['toy'],
      1,
      coverageRows.length,
    ]);
    const [generation] = figure.generations;
    expect(generation!.generation).toBe('L0');
    const [task] = generation!.tasks;
    const tally = (version: string, outcome: string | null) =>
      coverageRows.filter((row) => row.candidate === version && row.outcome === outcome).length;
    for (const version of task!.versions) {
      expect([version.wins, version.ties, version.losses, version.failed]).toEqual([
        tally(version.version, 'win'),
        tally(version.version, 'tie'),
        tally(version.version, 'loss'),
        tally(version.version, null),
      ]);
    }
    const unanimous = task!.versions.find(
      (version) => version.wins > 0 && version.ties === 0 && version.losses === 0,
    );
    expect(task!.firstWin).toBe(unanimous?.iteration ?? null);
    const loopFirstWin = searches.base.championHistory.findIndex((entry) => entry.champion !== 'reference');
    expect(task!.loopFirstWin).toBe(loopFirstWin === -1 ? null : loopFirstWin);
    expect(generation!.curve.map((point) => point.won)).toEqual(
      searches.base.championHistory.map((_, iteration) =>
        task!.firstWin !== null && task!.firstWin <= iteration ? 1 : 0,
      ),
    );
  });

  it('mass compare prints both runs side by side and writes the page', async () => {
    const result = await runMass(['compare', base, ablation, '--out', page]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    const roles = lines.find((line) => line.includes('strong-judge') && line.includes(ablation))!;
    expect(roles).toMatch(/strong-judge\s+toy-L0\s+strong-judge\s+the executor/);
    const won = (search: TaskSearchResult) => (search.beatsReference ? 1 : 0);
    const row = (run: string, measure: string) =>
      lines.find(
        (line) => line.startsWith(`  ${run} `) && line.includes(measure) && line.includes(' of 1 '),
      )!;
    expect(row('base', "loop's own judge")).toContain(`${won(searches.base)} of 1`);
    expect(row('strong-judge', "loop's own judge")).toContain(`${won(searches.ablation)} of 1`);
    const outsideWon = summary.searchCoverage!.generations[0]!.summary.won;
    expect(row('base', 'external judges (evaluation default)')).toContain(`${outsideWon} of 1`);
    expect(lines.some((line) => line.startsWith('  strong-judge ') && line.includes('external'))).toBe(false);

    expect(existsSync(page)).toBe(true);
    const markup = readFileSync(page, 'utf8');
    expect(markup).toContain('http-equiv="Content-Security-Policy"');
    expect(markup).not.toMatch(/<script/i);
    expect(markup).toContain('Tasks with a winning design by search iteration, L0');
    expect(markup).toContain('external judges (evaluation default)');
    expect(markup).toContain('<svg');

    const json = await runMass(['compare', base, ablation, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      runs: Array<{ label: string; generations: Array<{ outside: Array<{ coverage: unknown }> }> }>;
    };
    expect(parsed.runs.map((run) => run.label)).toEqual(['base', 'strong-judge']);
    expect(parsed.runs[0]!.generations[0]!.outside[0]!.coverage).toEqual(
      summary.searchCoverage!.generations[0],
    );
  }, 60_000);
});
