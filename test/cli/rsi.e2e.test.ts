import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { RsiSummaryRecord } from '../../src/records/rsi-records.js';
import { loadToyWeights } from '../../src/toy/weights.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { seededRandom } from '../support/seeded-random.js';

/** The kill moments, replayable: the seed is printed, MASS_TEST_SEED sets it. */
const random = seededRandom('mass rsi kill delays');

interface StepRow {
  key: string;
  status: string;
  attempts: number;
  finished_at: string | null;
}

/** The smallest loop that still has every stage: one task, v0 only, three champion runs, one train and one validation. */
const config = (name: string) =>
  [
    `name: ${name}`,
    `suite: ${DEMO_SUITE}`,
    'tasks: [demo-volatility]',
    'model: { kind: toy }',
    'roles: { executor: { model: mass-toy } }',
    'budgets: { episodeTimeoutSeconds: 150 }',
    'concurrency: { episodes: 2, judgments: 2, tasks: 1 }',
    'search: { iterations: 0 }',
    'distill: { runs: 3, needed: 2, maxTopUps: 1, ringOpponents: 2, train: 1, validation: 1 }',
    'rsi: { servedAs: "toy-{generation}" }',
    '',
  ].join('\n');

describe('mass rsi on the toy model', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  afterAll(() => directory.remove());

  const steps = (run: string): StepRow[] => {
    const database = new Database(join(runs, run, 'mass.db'), { readonly: true });
    try {
      return database.prepare('SELECT key, status, attempts, finished_at FROM steps').all() as StepRow[];
    } finally {
      database.close();
    }
  };

  // One kill, at a random moment of either round: a second one only checked again that the steps done before a kill are
  // the same after the resume, at the cost of another interrupted start.
  it('two rounds, killed with SIGKILL at a random moment and resumed: consistent generations, nothing done twice', async () => {
    const file = join(directory.path, 'rsi.yaml');
    writeFileSync(file, config('rsi-kill'));
    const args = ['rsi', '--config', file, '--runs', runs, '--rounds', '2'];
    const done = new Map<string, StepRow>();
    const delay = 4_000 + Math.floor(random() * 24_000);
    const { child, finished } = startMass(args);
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill('SIGKILL');
    await finished;
    if (existsSync(join(runs, 'rsi-kill', 'mass.db')))
      for (const row of steps('rsi-kill').filter((step) => step.status === 'done')) done.set(row.key, row);
    const result = await runMass([...args, '--json']);
    expect(result.code, `${result.stderr}\nkilled after ${delay} ms`).toBe(0);
    const rows = steps('rsi-kill');
    expect(rows.every((row) => row.status === 'done')).toBe(true);
    for (const [key, earlier] of done) expect(rows.find((row) => row.key === key)).toEqual(earlier);

    // Every stage of both generations is a step done once.
    const keys = rows.map((row) => row.key);
    for (const generation of ['L0', 'L1']) {
      for (const key of [
        `search/${generation}/demo-volatility/reference/episode`,
        `search/${generation}/demo-volatility/v0/judge`,
        `search/${generation}/demo-volatility/result`,
        `distill/${generation}/demo-volatility/collect`,
        `distill/${generation}/demo-volatility/fit`,
        `distill/${generation}/demo-volatility/select`,
        `distill/${generation}/dataset`,
      ]) {
        expect(keys).toContain(key);
      }
    }
    expect(keys).toEqual(expect.arrayContaining(['rsi/L1/train', 'rsi/L2/train']));

    // The registry, the summary and the files agree.
    const summary = await RsiSummaryRecord.read(join(runs, 'rsi-kill', 'rsi-summary.json'));
    expect(JSON.parse(result.stdout)).toEqual(summary);
    expect(summary.registry).toEqual([
      { name: 'L0', parent: null, servedAs: 'mass-toy', datasetId: null },
      { name: 'L1', parent: 'L0', servedAs: 'toy-L1', datasetId: 'distill/L0/dataset' },
      { name: 'L2', parent: 'L1', servedAs: 'toy-L2', datasetId: 'distill/L1/dataset' },
    ]);
    expect(summary.generations.map((generation) => generation.servedAs)).toEqual(['mass-toy', 'toy-L1']);
    const registry = await ModelRegistry.open(join(runs, 'rsi-kill'));
    const weights = await Promise.all(
      registry.list().map((generation) => loadToyWeights(generation.mergedPath!)),
    );
    expect(weights.map((entry) => entry.generation)).toEqual([0, 1, 2]);
    for (const generation of summary.generations) {
      expect(generation.dataset!.trainEpisodes).toBe(1);
      expect(generation.dataset!.validationEpisodes).toBe(1);
      expect(generation.trained!.metrics.supervisedTokensProcessed).toBe(
        generation.dataset!.supervisedTokens,
      );
    }

    // One finished episode per directory: none lost, none left half-written.
    const episodes = readdirSync(join(runs, 'rsi-kill', 'episodes'));
    expect(episodes.filter((episode) => episode.startsWith('L1-'))).not.toHaveLength(0);
    for (const episode of episodes) {
      expect(existsSync(join(runs, 'rsi-kill', 'episodes', episode, 'episode.json')), episode).toBe(true);
    }

    // Finished: running it again plays nothing.
    const again = await runMass([...args, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(steps('rsi-kill')).toEqual(rows);
  }, 600_000);
});
