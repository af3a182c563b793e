import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import {
  EvaluationSummaryRecord,
  JudgmentRow,
  type EvaluationSummary,
} from '../../src/records/evaluation-records.js';
import { ChatMessage } from '../../src/model/types.js';
import { TaskSearchRecord, type TaskSearchResult } from '../../src/records/search-records.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { judgeTurn } from '../../src/toy/toy-judge.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { copySharedRun, sharedDemoSearch } from '../support/shared-runs.js';

const TASK = 'demo-volatility';
const TASKS = ['demo-potency', TASK];

/** The ablation: a search on the toy model of one demo task, one iteration after v0, with a judge of its own. */
const ablationConfig = (judge: string) =>
  [
    'name: strong-judge',
    `suite: ${DEMO_SUITE}`,
    `tasks: [${TASK}]`,
    'model: { kind: toy }',
    'roles:',
    '  executor: { model: toy-L0 }',
    `  judge: { model: strong-judge, baseUrl: "${judge}" }`,
    'search: { iterations: 1 }',
    'budgets: { episodeTimeoutSeconds: 150 }',
    'concurrency: { episodes: 3, judgments: 2, tasks: 1 }',
    '',
  ].join('\n');

/**
 * Figure 7 by command, kept short: two searches on the toy model (every role the toy; the judge a "stronger" one on a
 * scripted server that judges as the toy judge does), an evaluation of the first with `searchCoverage`, then
 * `mass compare` of both. The first is the shared search of both demo tasks (shared-runs.ts), copied, since the
 * evaluation writes into it. Everything asserted is read back from what the commands recorded.
 */
describe('mass compare of two searches, one judged from outside', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  let base: string;
  let baseConfig: string;
  const ablation = join(runs, 'strong-judge');
  const page = join(directory.path, 'figure-7.html');
  let judge: ScriptedServer;
  let summary: EvaluationSummary;
  let searches: { base: Record<string, TaskSearchResult>; ablation: TaskSearchResult };
  const ablationFile = join(directory.path, 'strong-judge.yaml');
  /** A task's versions that ran, each judged by the evaluation. */
  const judged = (task: string) =>
    searches.base[task]!.iterations.filter((iteration) => iteration.episode?.status === 'success');

  beforeAll(async () => {
    judge = await startScriptedServer({
      models: ['strong-judge'],
      responder: (request) =>
        judgeTurn(ChatMessage.array().parse((request.body as { messages: unknown[] }).messages)),
    });
    writeFileSync(ablationFile, ablationConfig(judge.baseUrl));
  });
  afterAll(async () => {
    await judge?.close();
    directory.remove();
  });

  it('searches both runs, then evaluates the first with searchCoverage: one judgment step per version', async () => {
    // The ablation's search runs while the base run is searched (or waited for) and evaluated.
    const ablationSearched = runMass(['search', '--config', ablationFile, '--runs', runs, '--skip-doctor']);
    const baseSearched = await sharedDemoSearch();
    expect(baseSearched.result.code, baseSearched.result.stderr).toBe(0);
    base = copySharedRun(baseSearched, runs);
    baseConfig = baseSearched.configFile;

    const evaluated = await runMass(['eval', '--config', baseConfig, '--runs', runs, '--skip-doctor']);
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(evaluated.stderr).toContain('search coverage: every version judged against its search');
    // The terminal summary gives the curve alone: no episode ran, so there is no win rate to print.
    expect(evaluated.stdout).toContain("Search coverage (the paper's Figure 4)");
    expect(evaluated.stdout).toMatch(/^ {2}L0: 0: [012]\/2, 1: [012]\/2/m);
    expect(evaluated.stdout).not.toContain('Win rate');

    const ablationResult = await ablationSearched;
    expect(ablationResult.code, ablationResult.stderr).toBe(0);
    searches = {
      base: Object.fromEntries(
        await Promise.all(
          TASKS.map(
            async (task) =>
              [task, await TaskSearchRecord.read(join(base, 'search', 'L0', task, 'result.json'))] as const,
          ),
        ),
      ),
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
    expect(keys).toEqual(
      TASKS.flatMap((task) =>
        judged(task).map((iteration) => ({
          key: `evaluation/default/search-coverage/L0/${task}/${iteration.version}/toy/0`,
          status: 'done',
        })),
      ),
    );
  }, 300_000);

  it('records each version’s judgments against the reference in judgments.jsonl, apart from the evaluation’s figures', () => {
    const rows = readFileSync(join(base, 'evaluation', 'default', 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JudgmentRow.parse(JSON.parse(line)));
    const coverageRows = rows.filter((row) => row.sample === 'search-coverage L0');
    // Both A/B orders per judge and seed (the evaluation's orders: both).
    expect(coverageRows).toHaveLength(TASKS.reduce((sum, task) => sum + judged(task).length * 2, 0));
    for (const row of coverageRows) {
      const search = searches.base[row.task]!;
      expect([row.condition, row.baseline, row.baselineEpisode, row.judge]).toEqual([
        'search',
        'reference',
        search.reference.episodeId,
        'toy',
      ]);
      const iteration = search.iterations[row.replicate]!;
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
    expect(generation!.tasks.map((task) => task.task).sort()).toEqual(TASKS);
    const firstWins: Array<number | null> = [];
    for (const task of generation!.tasks) {
      const search = searches.base[task.task]!;
      const tally = (version: string, outcome: string | null) =>
        coverageRows.filter(
          (row) => row.task === task.task && row.candidate === version && row.outcome === outcome,
        ).length;
      for (const version of task.versions) {
        expect([version.wins, version.ties, version.losses, version.failed]).toEqual([
          tally(version.version, 'win'),
          tally(version.version, 'tie'),
          tally(version.version, 'loss'),
          tally(version.version, null),
        ]);
      }
      const unanimous = task.versions.find(
        (version) => version.wins > 0 && version.ties === 0 && version.losses === 0,
      );
      expect(task.firstWin, task.task).toBe(unanimous?.iteration ?? null);
      const loopFirstWin = search.championHistory.findIndex((entry) => entry.champion !== 'reference');
      expect(task.loopFirstWin, task.task).toBe(loopFirstWin === -1 ? null : loopFirstWin);
      firstWins.push(task.firstWin);
    }
    // The curve: per iteration, the tasks whose first win came by then.
    expect(generation!.curve.map((point) => [point.won, point.tasks])).toEqual(
      searches.base[TASK]!.championHistory.map((_, iteration) => [
        firstWins.filter((first) => first !== null && first <= iteration).length,
        TASKS.length,
      ]),
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
      lines.find((line) => line.startsWith(`  ${run} `) && line.includes(measure) && / of [12] /.test(line))!;
    const baseWon = TASKS.reduce((sum, task) => sum + won(searches.base[task]!), 0);
    expect(row('demo-search', "loop's own judge")).toContain(`${baseWon} of 2`);
    expect(row('strong-judge', "loop's own judge")).toContain(`${won(searches.ablation)} of 1`);
    const outsideWon = summary.searchCoverage!.generations[0]!.summary.won;
    expect(row('demo-search', 'external judges (evaluation default)')).toContain(`${outsideWon} of 2`);
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
    expect(parsed.runs.map((run) => run.label)).toEqual(['demo-search', 'strong-judge']);
    expect(parsed.runs[0]!.generations[0]!.outside[0]!.coverage).toEqual(
      summary.searchCoverage!.generations[0],
    );
  }, 60_000);
});
