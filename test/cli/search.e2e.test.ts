import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskSearchRecord } from '../../src/records/search-records.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { copySharedRun, sharedToySearch, TOY_SEARCH_CONFIG } from '../support/shared-runs.js';
import { seededRandom } from '../support/seeded-random.js';
import { searchModel, tasksDir } from '../search/support.js';

/** The kill moments, replayable: the seed is printed, MASS_TEST_SEED sets it. */
const random = seededRandom('mass search kill delays');

interface StepRow {
  key: string;
  status: string;
  attempts: number;
  finished_at: string | null;
}

describe('mass search', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const configFile = join(directory.path, 'search.yaml');
  let server: ScriptedServer;

  beforeAll(async () => {
    server = await startScriptedServer({ responder: searchModel().responder, models: ['toy'] });
    writeFileSync(
      configFile,
      [
        'name: kill-and-resume',
        `suite: ${tasksDir}`,
        'tasks: [tiny-sum]',
        'roles:',
        `  executor: { model: toy, baseUrl: "${server.baseUrl}" }`,
        'budgets: { episodeTimeoutSeconds: 120 }',
        'search: { iterations: 1 }',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  const doneSteps = (): StepRow[] => {
    const database = new Database(join(runs, 'kill-and-resume', 'mass.db'), { readonly: true });
    try {
      return database.prepare('SELECT key, status, attempts, finished_at FROM steps').all() as StepRow[];
    } finally {
      database.close();
    }
  };

  // One kill at a random moment: a second one only checked again that a step done before a kill is the same after the
  // resume, at the cost of another interrupted start.
  it('killed with SIGKILL at a random moment, resumes and finishes with no step done twice', async () => {
    const seen = new Map<string, StepRow>();
    const delay = 1_500 + Math.floor(random() * 8_000);
    const { child, finished } = startMass(['search', '--config', configFile, '--runs', runs]);
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill('SIGKILL');
    await finished;
    if (existsSync(join(runs, 'kill-and-resume', 'mass.db')))
      for (const row of doneSteps()) if (row.status === 'done') seen.set(row.key, row);
    const result = await runMass(['search', '--config', configFile, '--runs', runs]);
    expect(result.code, `${result.stderr}\nkilled after ${delay} ms`).toBe(0);
    expect(result.stdout).toMatch(/tiny-sum\s+v1\s+yes/);
    expect(result.stderr).toMatch(/\] tiny-sum: done, champion v1\n/);

    const rows = doneSteps();
    expect(rows.every((row) => row.status === 'done')).toBe(true);
    // A step finished before the kill is never started again.
    for (const [key, earlier] of seen) expect(rows.find((row) => row.key === key)).toEqual(earlier);
    expect(rows.map((row) => row.key).sort()).toEqual(
      ['reference/episode', 'v0/episode', 'v0/judge', 'v1/proposal', 'v1/episode', 'v1/judge', 'result']
        .map((key) => `search/L0/tiny-sum/${key}`)
        .sort(),
    );

    const record = await TaskSearchRecord.read(
      join(runs, 'kill-and-resume', 'search', 'L0', 'tiny-sum', 'result.json'),
    );
    expect(record.championHistory.map((entry) => entry.champion)).toEqual(['v0', 'v1']);
    // One finished episode per version, nothing half-written left behind.
    const episodes = readdirSync(join(runs, 'kill-and-resume', 'episodes')).sort();
    expect(episodes).toEqual(['L0-tiny-sum-reference', 'L0-tiny-sum-v0', 'L0-tiny-sum-v1']);
    for (const episode of episodes) {
      expect(existsSync(join(runs, 'kill-and-resume', 'episodes', episode, 'episode.json'))).toBe(true);
    }

    // Once finished, running it again calls no model at all (it only reads the served context from /v1/models).
    const modelCalls = () => server.requests.filter((request) => request.method === 'POST').length;
    const calls = modelCalls();
    const again = await runMass(['search', '--config', configFile, '--runs', runs, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(modelCalls()).toBe(calls);
    expect(JSON.parse(again.stdout).results[0].champion).toBe('v1');
  }, 300_000);

  it('refuses a bad configuration naming the field, and a changed one unless overridden', async () => {
    const bad = join(directory.path, 'bad.yaml');
    writeFileSync(
      bad,
      'name: x\nsuite: s\nroles: { executor: { model: toy } }\nsearch: { championRule: best }\n',
    );
    const refused = await runMass(['search', '--config', bad, '--runs', runs]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('search.championRule');

    const changed = await runMass(['search', '--config', configFile, '--runs', runs, '--iterations', '2']);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toMatch(/search\.iterations/);
  }, 90_000);

  it('searches on the built-in toy model (model: { kind: toy }), then distils its champion', async () => {
    // The search is the shared one (test/support/shared-runs.ts: this configuration, `mass search --json`), which
    // other files read too; the distillation writes into a copy of it.
    const toy = join(directory.path, 'toy.yaml');
    writeFileSync(toy, TOY_SEARCH_CONFIG);
    const early = await runMass(['distill', '--config', toy, '--runs', runs]);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/result\.json is missing: search task demo-volatility first/);

    const shared = await sharedToySearch();
    const { result } = shared;
    expect(result.code, result.stderr).toBe(0);
    const [search] = JSON.parse(result.stdout).results;
    expect(search).toMatchObject({
      task: 'demo-volatility',
      champion: 'v0',
      counts: { episodes: 2, failedEpisodes: 0, judgments: 1 },
    });
    rmSync(join(runs, 'toy-search'), { recursive: true, force: true });
    copySharedRun(shared, runs);

    // Then the outer loop's data from the search's champion, without training.
    const distilled = await runMass(['distill', '--config', toy, '--runs', runs, '--json']);
    expect(distilled.code, distilled.stderr).toBe(0);
    const data = JSON.parse(distilled.stdout);
    expect(data.perTask[0].collection.episodes).toHaveLength(3);
    expect(data.perTask[0].selection.train).toHaveLength(1);
    expect(data.perTask[0].selection.validation).toHaveLength(1);
    expect(data.dataset.stats.splits.train.total.windows).toBeGreaterThan(0);
  }, 240_000);

  it('prints the JSON Schema of the configuration', async () => {
    const result = await runMass(['config', 'schema']);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout);
    expect(schema.properties.search.properties.championRule.enum).toEqual(['paper', 'official']);
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'suite', 'roles']));
  }, 60_000);
});
