import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { judgeSeeds } from '../../src/config/judge-orders.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { judgePair, type WorkspaceBundle } from '../../src/judge/index.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { rightAndWrongBundles, removeScratchDirectories, tinySumTask, verdictJson } from './support.js';

let task: LoadedTask;
let candidate: WorkspaceBundle;
let baseline: WorkspaceBundle;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  task = await tinySumTask();
  ({ right: candidate, wrong: baseline } = await rightAndWrongBundles(task, 'official-orders'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeScratchDirectories);

describe("evaluation.orders: official, the official code's A/B draw", () => {
  it('judges with the seeds 42, 43 and 44, and random and both with 0, 1 and 2', () => {
    expect(judgeSeeds('official', 3)).toEqual([42, 43, 44]);
    expect(judgeSeeds('random', 3)).toEqual([0, 1, 2]);
    expect(judgeSeeds('both', 2)).toEqual([0, 1]);
  });

  it('shows the pair swapped exactly when random.Random(seed).choice([False, True]) is True: seed 44 of 42–44', async () => {
    const shown: string[] = [];
    for (const seed of judgeSeeds('official', 3)) {
      server = await startScriptedServer({ script: [step.text(verdictJson('A', 'A is better.'))] });
      const judgment = await judgePair({
        task,
        x: { label: 'candidate', bundle: candidate },
        y: { label: 'baseline', bundle: baseline },
        model: new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } }),
        modelName: 'judge',
        mode: 'official',
        seed,
        orderKey: `pair-${seed}`,
      });
      expect(judgment.mode).toBe('official');
      expect(judgment.judgments).toHaveLength(1);
      // The verdict names A: the side shown first wins.
      expect(judgment.winner).toBe(judgment.judgments[0]!.shownAsA);
      shown.push(judgment.judgments[0]!.shownAsA);
      await server.close();
      server = undefined;
    }
    expect(shown).toEqual(['x', 'x', 'y']);
  });

  it('is a setting of the evaluation', () => {
    const config = parseRunConfig(
      {
        name: 'official-orders',
        suite: 'suites/demo',
        roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
        evaluation: { orders: 'official' },
      },
      'run.yaml',
    );
    expect(config.evaluation?.orders).toBe('official');
  });
});
