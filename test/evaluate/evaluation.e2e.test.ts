import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EvaluationSummaryRecord, type EvaluationSummary } from '../../src/records/evaluation-records.js';
import { clopperPearsonInterval, signTest } from '../../src/records/evaluation-statistics/index.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { TaskSearchRecord } from '../../src/records/search-records.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { judgeTurn } from '../../src/toy/toy-judge.js';
import { BASE_TOY_WEIGHTS, saveToyWeights, type ToyWeights } from '../../src/toy/weights.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { ChatMessage } from '../../src/model/types.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { seededRandom } from '../support/seeded-random.js';

/** The kill moments, replayable: the seed is printed, MASS_TEST_SEED sets it. */
const random = seededRandom('mass eval kill delays');

interface StepRow {
  key: string;
  status: string;
  attempts: number;
  finished_at: string | null;
}

/** A generation made better by hand: it always delegates, checks, writes complete reports and complete results. */
const BETTER: ToyWeights = {
  ...BASE_TOY_WEIGHTS,
  generation: 1,
  delegateBare: 1,
  runChecks: 1,
  completeReport: 1,
  careful: 1,
};
const ROLLOUTS = 4;
const SEEDS = 3;
const OUTSIDE_MODELS = ['always-a', 'flaky', 'toy-judge'];

const configText = (name: string, judges: { alwaysA: string; flaky: string } | null) =>
  [
    `name: ${name}`,
    `suite: ${DEMO_SUITE}`,
    'tasks: [demo-volatility]',
    'model: { kind: toy }',
    'roles: { executor: { model: toy-L0 } }',
    'search: { iterations: 0 }',
    'budgets: { episodeTimeoutSeconds: 150 }',
    'concurrency: { episodes: 2, judgments: 2, tasks: 1 }',
    'rsi: { servedAs: "toy-{generation}" }',
    ...(judges
      ? [
          'evaluation:',
          '  tasks: [demo-volatility]',
          `  rollouts: ${ROLLOUTS}`,
          `  judgeSeeds: ${SEEDS}`,
          '  concurrency: { episodes: 2, judgments: 4 }',
          '  judges:',
          '    - { model: toy-judge, name: toy }',
          `    - { baseUrl: "${judges.alwaysA}", model: always-a }`,
          `    - { baseUrl: "${judges.flaky}", model: flaky }`,
        ]
      : []),
    '',
  ].join('\n');

/**
 * One evaluation of a generation made better by hand (toy weights) against the base, on one demo task, judged by the
 * toy judge, a judge that always answers "A", a flaky judge (its seed-0 verdicts need one repair, its seed-1
 * verdicts never parse) and the candidate itself (the self-judge). It is killed once at a random moment and resumed; the tests read what it recorded.
 */
describe('mass eval on the toy model', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const runDirectory = join(runs, 'evaluated');
  const configFile = join(directory.path, 'eval.yaml');
  let alwaysA: ScriptedServer;
  let flaky: ScriptedServer;
  let summary: EvaluationSummary;
  let stdout: string;

  beforeAll(async () => {
    alwaysA = await startScriptedServer({
      models: ['always-a'],
      responder: () => step.text('{"winner": "A", "rationale": "A is better."}'),
    });
    flaky = await startScriptedServer({
      models: ['flaky'],
      responder: (request) => {
        const body = request.body as { seed?: number; messages: unknown[] };
        const messages = ChatMessage.array().parse(body.messages);
        const repairing = messages.some((message) => message.role === 'assistant');
        if (body.seed === 1 || (body.seed === 0 && !repairing)) return step.text('Workspace A, I think.');
        return judgeTurn(messages);
      },
    });
    writeFileSync(configFile, configText('evaluated', { alwaysA: alwaysA.baseUrl, flaky: flaky.baseUrl }));
    // A registry of two generations, as the loop would leave it: the base and a better one.
    const registry = await ModelRegistry.open(runDirectory);
    const base = join(runDirectory, 'train', 'L0', 'toy-weights.json');
    const better = join(runDirectory, 'train', 'L1', 'toy-weights.json');
    await saveToyWeights(base, BASE_TOY_WEIGHTS);
    await saveToyWeights(better, BETTER);
    await registry.addBase({ model: base, servedAs: 'toy-L0' });
    await registry.add({
      name: 'L1',
      parent: 'L0',
      mergedPath: better,
      datasetId: 'by-hand',
      servedAs: 'toy-L1',
    });
  });
  afterAll(async () => {
    await alwaysA?.close();
    await flaky?.close();
    directory.remove();
  });

  const steps = (): StepRow[] => {
    const database = new Database(join(runDirectory, 'mass.db'), { readonly: true });
    try {
      return database.prepare('SELECT key, status, attempts, finished_at FROM steps').all() as StepRow[];
    } finally {
      database.close();
    }
  };

  it('killed with SIGKILL at a random moment and resumed: nothing finished is done again', async () => {
    const args = ['eval', '--config', configFile, '--runs', runs];
    const delay = 5_000 + Math.floor(random() * 15_000);
    const { child, finished } = startMass(args);
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill('SIGKILL');
    await finished;
    const before = existsSync(join(runDirectory, 'mass.db'))
      ? steps().filter((row) => row.status === 'done')
      : [];

    const result = await runMass([...args, '--json']);
    expect(result.code, `${result.stderr}\nkilled after ${delay} ms`).toBe(0);
    stdout = result.stdout;
    const after = steps();
    expect(after.every((row) => row.status === 'done')).toBe(true);
    for (const row of before) expect(after.find((other) => other.key === row.key)).toEqual(row);
    const keys = after.map((row) => row.key);
    expect(keys.filter((key) => key.startsWith('evaluation/default/episode/'))).toHaveLength(2 * ROLLOUTS);
    expect(keys.filter((key) => key.startsWith('evaluation/default/grade/'))).toHaveLength(2 * ROLLOUTS);
    expect(keys.filter((key) => key.startsWith('evaluation/default/judgment/'))).toHaveLength(
      ROLLOUTS * 4 * SEEDS,
    );

    summary = await EvaluationSummaryRecord.read(join(runDirectory, 'evaluation', 'default', 'summary.json'));
    expect(JSON.parse(stdout)).toEqual(summary);

    // Finished: running it again does nothing new.
    const again = await runMass(args);
    expect(again.code, again.stderr).toBe(0);
    expect(steps()).toEqual(after);
    expect(again.stdout).toContain('toy (toy)');
  }, 600_000);

  it('the better generation wins by the toy judge, over episode pairs, and by the oracle', () => {
    const comparison = summary.figures.winRates.find(
      (entry) => entry.candidate === 'L1' && entry.baseline === 'L0' && entry.condition === 'bare',
    )!;
    const toy = comparison.judges.find((judge) => judge.judge === 'toy')!;
    expect(summary.figures.settings.unit).toBe('episode pair');
    // Every judgment is counted, but the units are the episode pairs: one per replicate.
    expect(toy.pooled.judgments.count).toBe(ROLLOUTS * SEEDS * 2);
    expect(toy.pooled.pairs).toBe(ROLLOUTS);
    expect(toy.pooled.wins).toBeGreaterThan(toy.pooled.losses);
    // The interval and the test are over the decided pairs: however many judgments, 4 pairs cannot reach p ≤ 0.05.
    const decided = toy.pooled.wins + toy.pooled.losses;
    expect(toy.pooled.signTestP).toBeCloseTo(signTest(toy.pooled.wins, toy.pooled.losses)!, 12);
    expect(toy.perTask[0]!.winRateInterval).toEqual(clopperPearsonInterval(toy.pooled.wins, decided));
    expect(toy.pooled.winRateInterval!.lower).toBeLessThan(0.5);
    // No interval of the evaluation leaves out ½ where the exact sign test over the decided pairs does not reject.
    for (const entry of summary.figures.winRates) {
      for (const judge of entry.judges) {
        for (const cell of [...judge.perTask, judge.pooled]) {
          for (const interval of [cell.winRateInterval, cell.winRateWithTiesInterval]) {
            if (interval && (interval.lower > 0.5 || interval.upper < 0.5))
              expect(cell.signTestP!).toBeLessThanOrEqual(0.05);
          }
        }
      }
    }
    const grade = (generation: string) =>
      summary.figures.grades.find((entry) => entry.generation === generation && entry.condition === 'bare')!;
    expect(grade('L1').graded).toBe(ROLLOUTS);
    expect(grade('L1').mean!).toBeGreaterThan(grade('L0').mean!);
    const difference = summary.figures.gradeDifferences.find((entry) => entry.generation === 'L1')!;
    expect(difference.pairs).toBe(ROLLOUTS);
    expect(difference.meanDifference!).toBeGreaterThan(0);
  });

  it('the candidate judges its own pairs too (the self-judge), and every two evaluators’ agreement is measured', () => {
    const self = summary.figures.winRates[0]!.judges.find((judge) => judge.judge === 'self:L1')!;
    expect(self.pooled.judgments.count).toBe(ROLLOUTS * SEEDS * 2);
    expect(summary.judges.find((judge) => judge.name === 'self:L1')).toEqual({
      name: 'self:L1',
      model: 'toy-L1',
      standIn: 'toy',
    });
    const pairs = summary.figures.agreement
      .filter((entry) => entry.sample === 'evaluation')
      .map((entry) => [...entry.evaluators].sort().join(' & '));
    expect(pairs).toEqual(expect.arrayContaining(['oracle & self:L1', 'oracle & toy', 'self:L1 & toy']));
  });

  it('a judge that always answers "A" is inconsistent on every pair and scores 0.5 in both orders', () => {
    const inconsistency = summary.figures.orderInconsistency.find((entry) => entry.judge === 'always-a')!;
    expect(inconsistency.pairsInBothOrders).toBe(ROLLOUTS);
    expect(inconsistency.seedsInBothOrders).toBe(ROLLOUTS * SEEDS);
    expect(inconsistency.rate).toBe(1);
    const pooled = summary.figures.winRates[0]!.judges.find((judge) => judge.judge === 'always-a')!.pooled;
    // Its judgments split evenly, so every episode pair is a tie and nothing is decided.
    expect(pooled.judgments).toMatchObject({
      wins: ROLLOUTS * SEEDS,
      losses: ROLLOUTS * SEEDS,
      winRate: 0.5,
    });
    expect(pooled).toMatchObject({ pairs: ROLLOUTS, ties: ROLLOUTS, winRate: null, winRateWithTies: 0.5 });
  });

  it('malformed verdicts are repaired within the bound, or recorded as failed and left out', () => {
    const rows = readFileSync(join(runDirectory, 'evaluation', 'default', 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            key: string;
            order: string;
            judge: string;
            seed: number;
            status: string;
            repairs: number;
            outcome: string | null;
            attempts: unknown[];
          },
      );
    // Append-only: a row of an attempt the kill interrupted may come before its redone row; the last one counts.
    const last = new Map(rows.map((row) => [`${row.key} ${row.order}`, row]));
    const flakyRows = [...last.values()].filter((row) => row.judge === 'flaky');
    expect(flakyRows).toHaveLength(ROLLOUTS * SEEDS * 2);
    for (const row of flakyRows) {
      if (row.seed === 0) expect([row.status, row.repairs]).toEqual(['ok', 1]);
      if (row.seed === 1) {
        expect([row.status, row.outcome, row.attempts.length]).toEqual(['failed', null, 3]);
      }
      if (row.seed === 2) expect([row.status, row.repairs]).toEqual(['ok', 0]);
    }
    expect(summary.counts.failedJudgments).toBe(ROLLOUTS * 2);
    expect(summary.counts.repairedJudgments).toBe(ROLLOUTS * 2);
    const pooled = summary.figures.winRates[0]!.judges.find((judge) => judge.judge === 'flaky')!.pooled;
    expect(pooled.judgments.count).toBe(ROLLOUTS * 2 * 2);
  });

  it('the loop never sees the outside measures: a search beside the evaluation is the search without it', async () => {
    const judged = { alwaysA: alwaysA.requests.length, flaky: flaky.requests.length };
    const plainFile = join(directory.path, 'plain.yaml');
    writeFileSync(plainFile, configText('plain', null));
    const searches = ['evaluated', 'plain'].map(async (name) => {
      const file = name === 'plain' ? plainFile : configFile;
      const result = await runMass(['search', '--config', file, '--runs', runs]);
      expect(result.code, result.stderr).toBe(0);
      return TaskSearchRecord.read(join(runs, name, 'search', 'L0', 'demo-volatility', 'result.json'));
    });
    const [beside, alone] = await Promise.all(searches);
    const course = (record: Awaited<(typeof searches)[number]>) => ({
      champion: record.champion,
      history: record.championHistory,
      counts: record.counts,
      verdicts: record.iterations.map((iteration) =>
        iteration.decision?.matches.map((match) => match.result),
      ),
    });
    expect(course(beside!)).toEqual(course(alone!));
    // No loop request went to an evaluation judge, or named one.
    expect({ alwaysA: alwaysA.requests.length, flaky: flaky.requests.length }).toEqual(judged);
    const loopEpisodes = readdirSync(join(runDirectory, 'episodes'));
    expect(loopEpisodes.length).toBeGreaterThan(0);
    for (const episode of loopEpisodes) {
      for (const row of await readProxyLog(join(runDirectory, 'episodes', episode, 'requests.jsonl'))) {
        expect(OUTSIDE_MODELS).not.toContain(row.model);
      }
    }
    const searchFiles = readdirSync(join(runDirectory, 'search'), { recursive: true, encoding: 'utf8' });
    const judgmentFiles = searchFiles.filter((file) => file.includes('judgments') && file.endsWith('.json'));
    expect(judgmentFiles.length).toBeGreaterThan(0);
    for (const file of judgmentFiles) {
      const { model } = JSON.parse(readFileSync(join(runDirectory, 'search', file), 'utf8')) as {
        model: string;
      };
      expect(model).toBe('toy-L0');
    }
  }, 600_000);
});
