import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { EvaluationSummaryRecord, type JudgmentRow } from '../../src/records/evaluation-records.js';
import { randomOrder } from '../../src/judge/index.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { TaskSearchRecord, type TaskSearchResult } from '../../src/records/search-records.js';
import { episodeFiles } from '../../src/store/run-paths.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { workflowHash } from '../../src/workflow/render.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { openSearchRun, searchOneEndpoint } from '../search/one-endpoint-search.js';
import { searchModel, tasksDir } from '../search/support.js';

const TASK = 'tiny-sum';
const SEEDS = 2;
const CANDIDATE = 'L0-with-L1-designs';
const BASELINE = 'L0-with-L0-designs';

/**
 * The paper's Table 2 on the scripted search model (test/search/support.ts): its team leaves `made-by-<tag>.txt`,
 * `v0` for the task's own design and `reference` for the bare task, and its judge prefers the longer lineage
 * (reference < v0). Two searches of one task in one run, no optimizer iteration: L0's, where v0's run meets a model
 * error, so no version beats the bare task and L0's champion is the bare task; and L1's, whose champion is v0. Then
 * `mass eval` runs executor L0 with L1's designs against L0 with its own (the bare task), judged by the same scripted
 * model as an external judge: once in both orders, once in random orders under another evaluation name.
 */
describe('mass eval: workflow transfer (Table 2) and orders: random', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const runDirectory = join(runs, 'transfer');
  const searched = new Map<string, TaskSearchResult>();
  let server: ScriptedServer;

  const configFile = (name: string) => {
    const file = join(directory.path, `${name}.yaml`);
    writeFileSync(
      file,
      [
        'name: transfer',
        `suite: ${tasksDir}`,
        `roles: { executor: { model: scripted, baseUrl: "${server.baseUrl}" } }`,
        'evaluation:',
        `  name: ${name}`,
        `  models: [{ name: L0, endpoint: { model: scripted, baseUrl: "${server.baseUrl}" } }]`,
        '  comparisons: []',
        '  transfer: [{ executor: L0, designsFrom: L1 }]',
        '  rollouts: 1',
        `  judgeSeeds: ${SEEDS}`,
        `  judges: [{ model: judge, baseUrl: "${server.baseUrl}", name: scripted }]`,
        '',
      ].join('\n'),
    );
    return file;
  };
  const evaluate = (name: string, ...flags: string[]) =>
    runMass(['eval', '--config', configFile(name), '--runs', runs, '--skip-doctor', ...flags]);
  const judgmentRows = (name: string): JudgmentRow[] =>
    readFileSync(join(runDirectory, 'evaluation', name, 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as JudgmentRow);

  beforeAll(async () => {
    let failing = true;
    const model = searchModel({ failEpisode: (_task, tag) => failing && tag === 'v0' });
    server = await startScriptedServer({ responder: model.responder, models: ['scripted', 'judge'] });
    const run = openSearchRun({
      runsDirectory: runs,
      name: 'transfer',
      suite: tasksDir,
      model: 'scripted',
      baseUrl: server.baseUrl,
    });
    const tokenCounter = await loadTokenCounter();
    try {
      for (const generation of ['L0', 'L1']) {
        failing = generation === 'L0';
        await searchOneEndpoint({
          run,
          generation,
          baseUrl: server.baseUrl,
          model: 'scripted',
          maxTokens: 2000,
          taskDirs: [join(tasksDir, TASK)],
          settings: { iterations: 0, seed: 7, timeoutSeconds: 120 },
          tokenCounter,
          hiddenDirectories: [run.directory],
        });
      }
      failing = false;
    } finally {
      run.close();
    }
    for (const generation of ['L0', 'L1']) {
      searched.set(
        generation,
        await TaskSearchRecord.read(join(runDirectory, 'search', generation, TASK, 'result.json')),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it('runs L0 with L1’s champion designs against L0 with its own, and records which design each side ran', async () => {
    const [l0, l1] = [searched.get('L0')!, searched.get('L1')!];
    const hashOf = (search: TaskSearchResult) =>
      search.championDesign ? workflowHash(search.championDesign) : null;
    // L0's search never beat the bare task; L1's found a design: the transfer has something to measure.
    expect([l0.champion, l0.championDesign]).toEqual(['reference', null]);
    expect(l1.champion).toBe('v0');

    const result = await evaluate('both');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`transfer: ${CANDIDATE} against ${BASELINE} on ${TASK}`);
    expect(result.stderr).toContain(`L0's search never beat the bare task on ${TASK}: run bare there`);
    // The progress line counts judgments (one per order), as planned.
    expect(result.stderr).toContain(`judgments ${SEEDS * 2}/${SEEDS * 2}`);

    // Each side's episode ran its generation's champion (L0's: the bare task), and the team followed it.
    for (const [label, search] of [
      [CANDIDATE, l1],
      [BASELINE, l0],
    ] as const) {
      const dir = join(runDirectory, 'evaluation', 'both', 'episodes', `${label}-${TASK}-transfer-0`);
      const record = await EpisodeRecord.read(join(dir, episodeFiles.record));
      expect([record.status, record.model, record.workflowHash]).toEqual([
        'success',
        'scripted',
        hashOf(search),
      ]);
      // The scripted team marks the bare task `reference` and the task's own design `v0`: the champions' names.
      const mark = `made-by-${search.champion}.txt`;
      expect(existsSync(join(dir, episodeFiles.workspace, mark)), `${label}: ${mark}`).toBe(true);
    }

    const summary = await EvaluationSummaryRecord.read(
      join(runDirectory, 'evaluation', 'both', 'summary.json'),
    );
    expect(summary.comparisons).toEqual([{ candidate: CANDIDATE, baseline: BASELINE }]);
    expect(summary.conditions).toEqual(['transfer']);
    expect(summary.tasks).toEqual([TASK]);
    expect(summary.transfer).toEqual([
      {
        executor: 'L0',
        designsFrom: 'L1',
        against: 'L0',
        candidate: CANDIDATE,
        baseline: BASELINE,
        tasks: [
          {
            task: TASK,
            candidate: { generation: 'L1', champion: l1.champion, designHash: hashOf(l1) },
            baseline: { generation: 'L0', champion: 'reference', designHash: null },
            sameDesign: false,
          },
        ],
        leftOut: [],
      },
    ]);
    expect(summary.counts).toMatchObject({ episodes: 2, failedEpisodes: 0, judgments: SEEDS * 2, grades: 2 });
    // Both sides' episodes went to the task's grader (the fixture's grader gives no parts: recorded as failed).
    const graded = readFileSync(join(runDirectory, 'evaluation', 'both', 'grades.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { episodeId: string }).episodeId);
    expect(graded.sort()).toEqual([`${BASELINE}-${TASK}-transfer-0`, `${CANDIDATE}-${TASK}-transfer-0`]);
    const comparison = summary.figures.winRates.find(
      (entry) => entry.candidate === CANDIDATE && entry.baseline === BASELINE,
    );
    expect(comparison?.condition).toBe('transfer');
    expect(comparison?.judges.map((judge) => judge.judge)).toContain('scripted');

    // Every seed in both orders, under the transfer's labels; the judge preferred the longer lineage: L1's v0.
    const rows = judgmentRows('both');
    expect(rows).toHaveLength(SEEDS * 2);
    for (const row of rows) {
      expect(row).toMatchObject({
        condition: 'transfer',
        candidate: CANDIDATE,
        baseline: BASELINE,
        candidateEpisode: `${CANDIDATE}-${TASK}-transfer-0`,
        baselineEpisode: `${BASELINE}-${TASK}-transfer-0`,
        judge: 'scripted',
        status: 'ok',
        outcome: 'win',
      });
    }
    expect(rows.map((row) => `${row.seed} ${row.order}`).sort()).toEqual(
      Array.from({ length: SEEDS }, (_, seed) => [
        `${seed} baseline-first`,
        `${seed} candidate-first`,
      ]).flat(),
    );
  }, 120_000);

  it('orders: random (--orders) judges each pair, judge and seed once, in the order drawn from its seed and key', async () => {
    const result = await evaluate('random', '--orders', 'random');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`judgments ${SEEDS}/${SEEDS}`);
    const both = judgmentRows('both');
    const random = judgmentRows('random');
    expect(random.length * 2).toBe(both.length);
    // The same judgment steps as under both orders, one row each.
    expect(random.map((row) => row.key.replace('/random/', '/both/')).sort()).toEqual(
      [...new Set(both.map((row) => row.key))].sort(),
    );
    for (const row of random) {
      const drawn = randomOrder(row.seed, row.key) === 'x' ? 'candidate-first' : 'baseline-first';
      expect(row.order).toBe(drawn);
      expect(row.outcome).toBe('win');
    }
    const summary = await EvaluationSummaryRecord.read(
      join(runDirectory, 'evaluation', 'random', 'summary.json'),
    );
    expect(summary.settings).toMatchObject({ orders: 'random' });
    expect(summary.counts.judgments).toBe(SEEDS);
    // Both protocols agree on the clearly better side: the one episode pair is won, and the official pooled W/(W+L)
    // over the judgments is 1 with half the judgments.
    const bothSummary = await EvaluationSummaryRecord.read(
      join(runDirectory, 'evaluation', 'both', 'summary.json'),
    );
    for (const [evaluated, judgments] of [
      [bothSummary, SEEDS * 2],
      [summary, SEEDS],
    ] as const) {
      const pooled = evaluated.figures.winRates[0]!.judges.find(
        (judge) => judge.judge === 'scripted',
      )!.pooled;
      expect(pooled).toMatchObject({ pairs: 1, wins: 1, losses: 0, winRate: 1 });
      expect(pooled.judgments).toMatchObject({ count: judgments, wins: judgments, winRate: 1 });
    }
    // Order inconsistency needs both orders: measured under `both`, said not to be under `random`.
    expect(summary.figures.orderInconsistency.every((judge) => judge.pairsInBothOrders === 0)).toBe(true);
    expect(result.stdout).toContain('Order inconsistency: not measured');
    expect(result.stdout).toContain("Workflow transfer (the paper's Table 2)");
  }, 120_000);
});
