import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { judgePair, randomOrder, RUBRIC, type WorkspaceBundle } from '../../src/judge/index.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { runPython, type LoadedTask } from '../../src/tasks/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import {
  bundleOf,
  judgeUserMessage,
  removeScratchDirectories,
  rightTotalJudge,
  scratch,
  TINY_SUM_TOTAL,
  tinySumTask,
  tinySumWorkspace,
  verdictJson,
} from './support.js';

let task: LoadedTask;
let root: string;
/** The right total, and a note that it was checked by running the script again. */
let checked: WorkspaceBundle;
/** A slip in the sum: a wrong total, unchecked. */
let slipped: WorkspaceBundle;
let checkedDir: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  task = await tinySumTask();
  root = await scratch('order');
  checkedDir = await tinySumWorkspace(path.join(root, 'checked'), {
    files: {
      'results/summary.md': 'Total 10: `python3 simulate.py` prints 10, and a second run prints the same.\n',
    },
  });
  const slippedDir = await tinySumWorkspace(path.join(root, 'slipped'), {
    metrics: '{"total": 14}\n',
    files: { 'results/summary.md': 'Total 14.\n' },
  });
  [checked, slipped] = await Promise.all([bundleOf(task, checkedDir), bundleOf(task, slippedDir)]);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function judgeServer(
  answer: (userMessage: string) => string,
): Promise<{ server: ScriptedServer; model: OpenAICompatibleModel }> {
  const server = await startScriptedServer({
    responder: (request) => step.text(answer(judgeUserMessage(request))),
  });
  servers.push(server);
  return { server, model: new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } }) };
}

afterAll(removeScratchDirectories);

describe('the pairwise judge and the order of the workspaces', () => {
  it('turns a judge that always answers "A" into ties in both-orders mode', async () => {
    const { server, model } = await judgeServer(() => verdictJson('A', 'A is better.'));
    for (const seed of [0, 1, 2]) {
      const judgment = await judgePair({
        task,
        x: { label: 'checked', bundle: checked },
        y: { label: 'slipped', bundle: slipped },
        model,
        modelName: 'judge',
        mode: 'both',
        seed,
      });
      expect(judgment).toMatchObject({ status: 'decided', winner: 'tie', ordersAgree: false, mode: 'both' });
      expect(
        judgment.judgments.map((single) => [single.shownAsA, single.verdict?.winner, single.winner]),
      ).toEqual([
        ['x', 'A', 'x'],
        ['y', 'A', 'y'],
      ]);
    }
    expect(server.requests).toHaveLength(6);
  });

  it('maps the verdict back to the caller’s workspaces whichever order the seed draws (random mode)', async () => {
    const { model } = await judgeServer(rightTotalJudge);
    const orders = new Set<string>();
    for (let seed = 0; seed < 12; seed++) {
      const judgment = await judgePair({
        task,
        x: { label: 'checked', bundle: checked },
        y: { label: 'slipped', bundle: slipped },
        model,
        modelName: 'judge',
        seed,
      });
      const [single] = judgment.judgments;
      orders.add(single!.shownAsA);
      expect(judgment.judgments).toHaveLength(1);
      expect(single!.shownAsA).toBe(randomOrder(seed, 'checked\nslipped'));
      expect(single!.verdict!.winner).toBe(single!.shownAsA === 'x' ? 'A' : 'B');
      expect(judgment).toMatchObject({ status: 'decided', winner: 'x', ordersAgree: null });

      const swapped = await judgePair({
        task,
        x: { label: 'slipped', bundle: slipped },
        y: { label: 'checked', bundle: checked },
        model,
        modelName: 'judge',
        seed,
      });
      expect(swapped.winner).toBe('y');
    }
    expect([...orders].sort()).toEqual(['x', 'y']);
  });

  it('agrees with itself in both orders when the judge looks at the evidence', async () => {
    // The evidence is true: the checked workspace's total is what its protected script prints.
    const run = await runPython(['simulate.py'], { cwd: checkedDir, timeoutMs: 30_000 });
    expect(run.stdout.trim()).toBe(String(TINY_SUM_TOTAL));
    expect(checked.text).toContain(`{"total": ${TINY_SUM_TOTAL}}`);
    const { model } = await judgeServer(rightTotalJudge);
    const judgment = await judgePair({
      task,
      x: { label: 'slipped', bundle: slipped },
      y: { label: 'checked', bundle: checked },
      model,
      modelName: 'judge',
      mode: 'both',
    });
    expect(judgment).toMatchObject({ status: 'decided', winner: 'y', ordersAgree: true });
  });

  it('draws orders reproducibly from seed and order key', () => {
    expect(randomOrder(5, 'pair-1')).toBe(randomOrder(5, 'pair-1'));
    const drawn = Array.from({ length: 64 }, (_, index) => randomOrder(index, 'pair-1'));
    const shownFirst = drawn.filter((side) => side === 'x').length;
    expect(shownFirst).toBeGreaterThan(16);
    expect(shownFirst).toBeLessThan(48);
  });

  it('gives the judge persona, lens, rubric and task text, but not the caller’s labels or paths', async () => {
    const { server, model } = await judgeServer(rightTotalJudge);
    await judgePair({
      task,
      x: { label: 'episode-reference-run', bundle: checked },
      y: { label: 'episode-candidate-v3', bundle: slipped },
      model,
      modelName: 'judge',
    });
    const body = server.requests[0]!.body as {
      messages: Array<{ role: string; content: string }>;
      max_tokens: number;
    };
    const [system, user] = body.messages;
    expect(system!.content).toContain(task.judge.persona);
    expect(system!.content).toContain(task.judge.lens);
    for (const point of RUBRIC) expect(system!.content).toContain(point.name);
    expect(system!.content).toContain(
      '{"winner": "A" | "B" | "tie", "rationale": "...", "against_A": ["..."], "against_B": ["..."]}',
    );
    expect(user!.content).toContain('`data/numbers.csv` has one column');
    expect(user!.content).not.toMatch(/episode-reference-run|episode-candidate-v3/);
    expect(user!.content).not.toContain(root);
    expect(body.max_tokens).toBe(49_152);
  });
});
