import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { judgmentsPerStep, judgmentWork } from '../../src/evaluate/evaluation-judgments.js';
import type { ServedJudge } from '../../src/evaluate/serve-evaluation.js';
import { randomOrder } from '../../src/judge/index.js';
import { outageSettings } from '../../src/config/fault-tolerance.js';
import { JsonlAppender } from '../../src/proxy/jsonl-appender.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { EndpointPools } from '../../src/session/endpoint-pools.js';
import { step } from '../../src/toy/steps.js';
import { WorkRunner } from '../../src/work/work-runner.js';
import { removeScratchDirectories, scratch, verdictJson } from '../judge/support.js';
import { judgedEpisodes, scriptedJudge, tinySumPair, type TinySumPair } from './judged-pair.js';

let tinySum: TinySumPair;
let server: ScriptedServer;
let run: Run<RunConfig>;
let judgments: JsonlAppender;
let judge: ServedJudge;

beforeAll(async () => {
  const root = await scratch('evaluation-judgments');
  tinySum = await tinySumPair(root);
  // A judge that always prefers workspace A: its verdict says which order it was shown.
  server = await startScriptedServer({ responder: () => step.text(verdictJson('A')) });
  judge = scriptedJudge('always-a', server.baseUrl);
  run = openRun({
    runsDirectory: root,
    name: 'judged',
    configSchema: RunConfig,
    config: {
      name: 'judged',
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: server.baseUrl, model: 'm' } },
    },
  });
  judgments = new JsonlAppender(path.join(root, 'judgments.jsonl'));
});
afterAll(async () => {
  await judgments?.close();
  run?.close();
  await server?.close();
  await removeScratchDirectories();
});

const pair = () => judgedEpisodes(tinySum, 0, (label) => `${label}-tiny-sum-bare-0`);

const judgeOnce = (key: string, seed: number, orders: 'both' | 'random') =>
  new WorkRunner(run, new EndpointPools(outageSettings({}))).submit(
    judgmentWork({ key, pair: pair(), judge, seed, orders, repairAttempts: 0, concurrency: 2, judgments }),
  );

describe('the orders each judgment step judges', () => {
  it('both: two rows, one per order; random: one row per seed, in the order drawn from the seed and the key', async () => {
    expect([judgmentsPerStep('both'), judgmentsPerStep('random')]).toEqual([2, 1]);
    const calls = server.requests.length;
    const both = await judgeOnce('eval/judgment/both/0', 0, 'both');
    expect(both.map((row) => [row.order, row.outcome])).toEqual([
      ['candidate-first', 'win'],
      ['baseline-first', 'loss'],
    ]);
    expect(server.requests.length - calls).toBe(2);

    const drawn: string[] = [];
    for (let seed = 0; seed < 8; seed++) {
      const key = `eval/judgment/random/${seed}`;
      const before = server.requests.length;
      const rows = await judgeOnce(key, seed, 'random');
      expect(server.requests.length - before).toBe(1);
      expect(rows).toHaveLength(1);
      const expected = randomOrder(seed, key) === 'x' ? 'candidate-first' : 'baseline-first';
      expect(rows[0]!.order).toBe(expected);
      // The judge always answers A: the candidate wins exactly when it was shown first.
      expect(rows[0]!.outcome).toBe(expected === 'candidate-first' ? 'win' : 'loss');
      drawn.push(rows[0]!.order);
    }
    // Over eight seeds both orders come up (what the hash gives for these keys).
    expect(new Set(drawn).size).toBe(2);
  });

  it('a finished step is not judged again, and is refused under the other orders setting', async () => {
    const before = server.requests.length;
    const again = await judgeOnce('eval/judgment/random/3', 3, 'random');
    expect(again).toHaveLength(1);
    expect(server.requests.length).toBe(before);
    await expect(judgeOnce('eval/judgment/random/3', 3, 'both')).rejects.toThrow(
      /evaluation\.orders: eval\/judgment\/random\/3 was judged with orders: random, and the configuration now says both/,
    );
    await expect(judgeOnce('eval/judgment/both/0', 0, 'random')).rejects.toThrow(
      /judged with orders: both.*give evaluation\.name another name/,
    );
    expect(server.requests.length).toBe(before);
  });
});
