import { readFile } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { outageSettings } from '../../src/config/fault-tolerance.js';
import { RunConfig } from '../../src/config/run-config.js';
import {
  BudgetExhaustedError,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { judgmentWork } from '../../src/evaluate/evaluation-judgments.js';
import { JudgmentRow } from '../../src/records/evaluation-records.js';
import { EvaluationSpending } from '../../src/evaluate/evaluation-spending.js';
import { JsonlAppender } from '../../src/proxy/jsonl-appender.js';
import { EndpointPools } from '../../src/session/endpoint-pools.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { WorkRunner } from '../../src/work/work-runner.js';
import { judgedEpisodes, scriptedJudge, tinySumPair, type TinySumPair } from '../evaluate/judged-pair.js';
import { removeScratchDirectories, scratch, verdictJson } from '../judge/support.js';

let root: string;
let pair: TinySumPair;
let server: ScriptedServer;

/** Each judge call costs $0.01 as the provider reports it; a judgment in both orders is two calls. */
const CALL_USD = 0.01;
const PAIRS = 5;

beforeAll(async () => {
  root = await scratch('evaluation-budget');
  pair = await tinySumPair(root);
  server = await startScriptedServer({
    responder: () =>
      step.reply({
        content: verdictJson('A'),
        usage: { promptTokens: 2000, completionTokens: 100, cost: CALL_USD },
      }),
  });
});
afterAll(async () => {
  await server?.close();
  await removeScratchDirectories();
});

function openJudged(evaluationBudget: number): Run<RunConfig> {
  return openRun({
    runsDirectory: root,
    name: 'budgeted',
    configSchema: RunConfig,
    config: {
      name: 'budgeted',
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: server.baseUrl, model: 'm' } },
      budgets: { cost: { stages: { evaluation: evaluationBudget } } },
    },
  });
}

/** The evaluation's judgments of PAIRS pairs, one judge, both orders, one at a time, as `mass eval` runs them. */
async function judgeAll(run: Run<RunConfig>): Promise<{ spending: EvaluationSpending; error: unknown }> {
  const spending = await EvaluationSpending.open(run, run.config, 'default');
  const [judge] = spending.served({
    models: new Map(),
    judges: [scriptedJudge('external', server.baseUrl)],
    selfJudges: new Map(),
    close: async () => {},
  }).judges;
  const judgments = new JsonlAppender(run.path('evaluation/default/judgments.jsonl'));
  const pools = new EndpointPools(outageSettings({}));
  const work = new WorkRunner(run, pools, { beforeWork: (kind) => spending.beforeWork(kind) });
  for (let replicate = 0; replicate < PAIRS; replicate++) {
    void work.submit(
      judgmentWork({
        key: `evaluation/default/judgment/L1-vs-L0/tiny-sum/bare/${replicate}/external/0`,
        pair: judgedEpisodes(pair, replicate, (label) => `${label}-${replicate}`),
        judge: judge!,
        seed: 0,
        orders: 'both',
        repairAttempts: 0,
        concurrency: 1,
        judgments,
      }),
    );
  }
  const error = await work.settle().then(
    () => null,
    (thrown: unknown) => thrown,
  );
  await judgments.close();
  await pools.close();
  return { spending, error };
}

async function recordedJudgments(run: Run<RunConfig>): Promise<JudgmentRow[]> {
  const text = await readFile(run.path('evaluation/default/judgments.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JudgmentRow.parse(JSON.parse(line)));
}

describe('a budget that runs out mid-evaluation', () => {
  it('stops it with exit code 3, and a rerun with a higher budget finishes with no judgment made twice', async () => {
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    // $0.05: two judgments ($0.04) leave it unspent, the third takes it past, the fourth and fifth are not started.
    const first = openJudged(0.05);
    let stopped;
    try {
      stopped = await judgeAll(first);
    } finally {
      first.close();
      unsubscribe();
    }
    expect(stopped.error).toBeInstanceOf(BudgetExhaustedError);
    expect((stopped.error as BudgetExhaustedError).exitCode).toBe(3);
    expect((stopped.error as Error).message).toMatch(
      /^budgets\.cost\.stages\.evaluation ran out: \$0\.0600 spent of \$0\.0500; the judge's next work in evaluation default was not started\./,
    );
    expect(events.map((event) => [event.budget, event.role, event.spent])).toEqual([
      ['budgets.cost.stages.evaluation', 'judge', expect.closeTo(0.06, 10)],
    ]);
    expect(server.requests).toHaveLength(6);
    expect(await recordedJudgments(first)).toHaveLength(6);
    const spentBefore = stopped.spending.summary();
    expect(spentBefore.roles.judge).toMatchObject({ calls: 6, promptTokens: 12_000, completionTokens: 600 });
    expect(spentBefore.total.cost.usd).toBeCloseTo(0.06, 10);
    expect(spentBefore.total.cost.reportedUsd).toBeCloseTo(0.06, 10);

    // The budget raised in the configuration: the same run, resumed; only the two judgments left are made.
    const second = openJudged(1);
    let resumed;
    try {
      resumed = await judgeAll(second);
    } finally {
      second.close();
    }
    expect(resumed.error).toBeNull();
    expect(server.requests).toHaveLength(2 * PAIRS);
    const rows = await recordedJudgments(second);
    expect(rows).toHaveLength(2 * PAIRS);
    const perKey = new Map<string, number>();
    for (const row of rows) perKey.set(row.key, (perKey.get(row.key) ?? 0) + 1);
    expect([...perKey.values()]).toEqual(Array<number>(PAIRS).fill(2));
    // Each recorded judgment carries its call's cost beside its usage.
    expect(
      rows.every((row) => row.usage.cost?.source === 'reported' && row.usage.cost.usd === CALL_USD),
    ).toBe(true);
    // The spending counts what was spent before the stop: all ten calls, $0.10.
    const spent = resumed.spending.summary();
    expect(spent.roles.judge).toMatchObject({ calls: 2 * PAIRS });
    expect(spent.total.cost.usd).toBeCloseTo(2 * PAIRS * CALL_USD, 10);
  });
});
