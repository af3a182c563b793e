import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { judgePair, type WorkspaceBundle } from '../../src/judge/index.js';
import { PairwiseJudgmentRecord } from '../../src/records/index.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step, type Step } from '../../src/toy/steps.js';
import { rightAndWrongBundles, removeScratchDirectories, tinySumTask, verdictJson } from './support.js';

let task: LoadedTask;
let first: WorkspaceBundle;
let second: WorkspaceBundle;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  task = await tinySumTask();
  ({ right: first, wrong: second } = await rightAndWrongBundles(task, 'repair'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function judgeWith(
  script: Step[],
  options: { maxRepairAttempts?: number; mode?: 'random' | 'both' } = {},
) {
  server = await startScriptedServer({ script });
  const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  return judgePair({
    task,
    x: { label: 'one', bundle: first },
    y: { label: 'two', bundle: second },
    model,
    modelName: 'judge',
    seed: 3,
    ...options,
  });
}

const messagesOf = (index: number) =>
  (server!.requests[index]!.body as { messages: Array<{ role: string; content: string }> }).messages;

afterAll(removeScratchDirectories);

describe('repairing malformed judge output', () => {
  it('sends the error back and accepts the repaired verdict', async () => {
    const judgment = await judgeWith([
      step.text('Workspace A is clearly better, its total is 10.', {
        usage: { promptTokens: 100, completionTokens: 10 },
      }),
      step.text(verdictJson('A', 'A has total 10 in results/metrics.json.'), {
        usage: { promptTokens: 120, completionTokens: 12 },
      }),
    ]);
    expect(judgment.status).toBe('decided');
    const [single] = judgment.judgments;
    expect(single!.attempts.map((attempt) => attempt.parse.ok)).toEqual([false, true]);
    expect(single!.attempts[0]).toMatchObject({
      attempt: 1,
      repairRequest: null,
      rawOutput: 'Workspace A is clearly better, its total is 10.',
      parse: { ok: false, error: 'no JSON object found in the reply' },
    });
    expect(single!.attempts[1]!.repairRequest).toContain('no JSON object found in the reply');
    expect(judgment.winner).toBe(single!.shownAsA);
    expect(judgment.usage).toMatchObject({ promptTokens: 220, completionTokens: 22 });

    const repair = messagesOf(1);
    expect(repair.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[2]!.content).toBe('Workspace A is clearly better, its total is 10.');
    expect(repair[3]!.content).toContain('reply with only the JSON object');
  });

  it('records a failed judgment, not a tie, once the repairs are spent', async () => {
    const judgment = await judgeWith(
      [step.text('A.'), step.text('{"winner": "C", "rationale": "?"}'), step.text('{"winner": "A"')],
      { maxRepairAttempts: 2 },
    );
    expect(judgment).toMatchObject({ status: 'failed', winner: null, ordersAgree: null });
    const [single] = judgment.judgments;
    expect(single).toMatchObject({ status: 'failed', verdict: null, winner: null });
    expect(single!.attempts).toHaveLength(3);
    expect(single!.attempts[1]!.parse).toEqual({
      ok: false,
      error: 'the JSON object is not a verdict: "winner" must be "A", "B" or "tie"',
    });
    expect(judgment.failure).toMatch(/^no valid verdict after 3 attempts: /);
    expect(server!.requests).toHaveLength(3);
    expect(messagesOf(2)[3]!.content).toContain('"winner" must be "A", "B" or "tie"');

    // The record keeps everything needed to audit the failure and survives a write and a read.
    const stored = PairwiseJudgmentRecord.parse(
      JSON.parse(PairwiseJudgmentRecord.serialize(judgment)),
      'test',
    );
    expect(stored.judgments[0]!.attempts.map((attempt) => attempt.rawOutput)).toEqual([
      'A.',
      '{"winner": "C", "rationale": "?"}',
      '{"winner": "A"',
    ]);
    expect(stored.judgments[0]!.prompt.user).toContain('<workspace name="A">');
  });

  it('fails the pair in both-orders mode when one order gives no verdict', async () => {
    const judgment = await judgeWith([step.text(verdictJson('A')), step.text('no idea')], {
      mode: 'both',
      maxRepairAttempts: 0,
    });
    expect(judgment.status).toBe('failed');
    expect(judgment.winner).toBeNull();
    expect(judgment.failure).toMatch(/^1 of 2 orders gave no valid verdict/);
    expect(judgment.judgments.map((single) => single.status).sort()).toEqual(['failed', 'ok']);
  });

  it('explains a reply cut at the output limit', async () => {
    const judgment = await judgeWith([step.reply({ content: 'Let me compare', finishReason: 'length' })], {
      maxRepairAttempts: 0,
    });
    expect(judgment.judgments[0]!.attempts[0]!.parse).toEqual({
      ok: false,
      error:
        'the reply was cut off at the output limit before the verdict (no JSON object found in the reply)',
    });
  });

  it('throws when the server itself fails: that is no judgment at all', async () => {
    await expect(judgeWith([step.status(400, { message: 'bad request' })])).rejects.toThrow(
      /bad request|400/,
    );
  });
});
