import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { proposeWorkflow, type ProposeWorkflowOptions } from '../../src/optimizer/propose-workflow.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step, type Step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { smallTeam } from '../workflow/support.js';
import { designWithCritic, optimizerInput, replyFor, smallImprovement } from './support.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function optimizerAgainst(script: Step[], options: Partial<ProposeWorkflowOptions> = {}) {
  const server = await startScriptedServer({ script, strict: 'openai-compatible' });
  servers.push(server);
  const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  const outcome = await proposeWorkflow(model, optimizerInput(), { modelName: 'scripted-model', ...options });
  server.assertDone();
  return { server, outcome };
}

interface SentMessage {
  role: string;
  content: string;
}

function messagesOf(server: ScriptedServer, index: number): SentMessage[] {
  return (server.requests[index]!.body as { messages: SentMessage[] }).messages;
}

describe('proposeWorkflow against a scripted model server', () => {
  it('returns a validated proposal with its prompt, attempt, usage and diff, ready to record', async () => {
    const reply = `Here is my proposal.\n\n\`\`\`json\n${replyFor(smallImprovement())}\n\`\`\``;
    const { server, outcome } = await optimizerAgainst([
      step.text(reply, {
        reasoning: 'the ablation keeps going missing',
        usage: { promptTokens: 3000, completionTokens: 700, reasoningTokens: 200 },
      }),
    ]);

    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.proposal).toEqual({
      design: smallImprovement(),
      changes: ['reviewer: new check ablation_written'],
      why: 'The ablation file was reported missing twice.',
      evidenceUsed: ['"results/ablation.json" was reported missing in 2 comparisons'],
      expectedImpact: 'The next workspace has results/ablation.json.',
      verificationChecks: ['results/ablation.json exists and lists at least two variants'],
    });
    expect(outcome.diffText).toMatch(/^\+ reviewer: check ablation_written: results\/ablation.json exists/);
    expect(outcome.changeFraction).toBeGreaterThan(0);
    expect(outcome.changeFraction).toBeLessThan(0.1);
    expect(outcome.prompt).toEqual(buildOptimizerPrompt(optimizerInput()));
    expect(outcome.usage).toEqual({
      promptTokens: 3000,
      completionTokens: 700,
      reasoningTokens: 200,
      totalTokens: 3700,
    });
    expect(outcome.attempts).toHaveLength(1);
    expect(outcome.attempts[0]).toMatchObject({
      attempt: 1,
      purpose: 'initial',
      message: outcome.prompt.user,
      output: { content: reply, reasoning: 'the ablation keeps going missing', finishReason: 'stop' },
      outcome: { ok: true },
    });

    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'scripted-model',
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      max_tokens: 49_152,
      chat_template_kwargs: { enable_thinking: true },
    });
    expect(messagesOf(server, 0)).toEqual([
      { role: 'system', content: outcome.prompt.system },
      { role: 'user', content: outcome.prompt.user },
    ]);

    const directory = temporaryDirectory();
    try {
      const file = path.join(directory.path, 'optimizer-call.json');
      await OptimizerCallRecord.write(file, { taskId: 'toy-task', currentLabel: 'v2', outcome });
      expect(await OptimizerCallRecord.read(file)).toEqual({
        taskId: 'toy-task',
        currentLabel: 'v2',
        outcome,
      });
    } finally {
      directory.remove();
    }
  });

  it('sends a malformed reply back with its errors and accepts the corrected one', async () => {
    const { server, outcome } = await optimizerAgainst([
      step.text('I would add an ablation check to the reviewer and tighten the analyst contract.'),
      step.text(
        JSON.stringify({ design: JSON.parse(replyFor(smallImprovement())).design, why: 'Ablation missing.' }),
      ),
      step.text(replyFor(smallImprovement())),
    ]);
    expect(outcome.ok).toBe(true);
    expect(outcome.attempts.map((attempt) => attempt.purpose)).toEqual(['initial', 'repair', 'repair']);
    expect(outcome.attempts[0]!.outcome).toMatchObject({ ok: false, reason: 'invalid-output' });

    const second = messagesOf(server, 1);
    expect(second.slice(0, 2)).toEqual(messagesOf(server, 0));
    expect(second[2]).toEqual({
      role: 'assistant',
      content: 'I would add an ablation check to the reviewer and tighten the analyst contract.',
    });
    expect(second[3]!.role).toBe('user');
    expect(second[3]!.content).toMatch(/^Your reply could not be used:\n- no JSON object found in the reply/);

    const third = messagesOf(server, 2);
    expect(third).toHaveLength(6);
    expect(third[5]!.content).toContain('- changes: Invalid input: expected array, received undefined');
    expect(third[5]!.content).toContain(
      '- verification_checks: Invalid input: expected array, received undefined',
    );
    expect(outcome.attempts[2]!.message).toBe(third[5]!.content);
  });

  it('records a failure after an invalid design twice, and never accepts it', async () => {
    const broken = smallImprovement();
    broken.hops.push({ from: 'reviewer', to: 'ghost' });
    delete broken.agents[1]!.contract;
    const { server, outcome } = await optimizerAgainst(
      [step.text(replyFor(broken)), step.text(replyFor(broken))],
      { repairAttempts: 1 },
    );
    expect(server.requests).toHaveLength(2);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).toBe('invalid-output');
    expect(outcome.refusedProposal).toBeNull();
    expect(outcome.errors).toEqual([
      'design: agents[1].contract: subagent "analyst" needs an output contract (what it returns to the orchestrator)',
      'design: hops[4].to: hop names unknown agent "ghost"',
    ]);
    expect(messagesOf(server, 1)[3]!.content).toContain(
      '- design: hops[4].to: hop names unknown agent "ghost"',
    );
    expect(outcome.attempts.map((attempt) => attempt.outcome.ok)).toEqual([false, false]);
    expect(outcome.usage.totalTokens).toBe(
      outcome.attempts.reduce((sum, attempt) => sum + (attempt.usage?.totalTokens ?? 0), 0),
    );
  });

  it('treats an unchanged design as unusable, and a reply cut off at the output limit says so', async () => {
    const { server, outcome } = await optimizerAgainst(
      [
        step.text(replyFor(smallTeam())),
        step.reply({ content: '{"design": {"agents": [', finishReason: 'length' }),
      ],
      { repairAttempts: 1 },
    );
    expect(server.requests).toHaveLength(2);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.attempts[0]!.outcome).toMatchObject({
      ok: false,
      errors: ['design: identical to the current design; change at least one thing the evidence points to'],
    });
    expect(outcome.errors.at(-1)).toBe(
      'the reply was cut off at the output limit; write shorter instructions and no text outside the JSON',
    );
  });

  it('rejects options that cannot work before calling the model', async () => {
    const model = new OpenAICompatibleModel({ baseUrl: 'http://127.0.0.1:9/v1' });
    await expect(
      proposeWorkflow(model, optimizerInput(), { modelName: 'm', maxChangeFraction: 0 }),
    ).rejects.toBeInstanceOf(UserError);
    await expect(
      proposeWorkflow(model, optimizerInput(), { modelName: 'm', repairAttempts: -1 }),
    ).rejects.toThrow(/repairAttempts must be a whole number/);
  });
});

describe('the change-size bound (the search stabiliser)', () => {
  it('sends a proposal that changes too much back once with the bound stated, then accepts one within it', async () => {
    const { server, outcome } = await optimizerAgainst(
      [step.text(replyFor(designWithCritic())), step.text(replyFor(smallImprovement()))],
      { maxChangeFraction: 0.1 },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.maxChangeFraction).toBe(0.1);
    expect(outcome.changeFraction).toBeLessThanOrEqual(0.1);
    expect(outcome.attempts.map((attempt) => attempt.purpose)).toEqual(['initial', 'change-bound']);
    expect(outcome.attempts[0]!.outcome).toEqual({
      ok: false,
      reason: 'change-bound-exceeded',
      errors: ['the design changes 25% of the current design; at most 10% may change in this iteration'],
      changeFraction: 0.25,
    });
    expect(messagesOf(server, 0)[1]!.content).toContain('change at most 10% of the current design');
    expect(messagesOf(server, 1)[3]!.content).toMatch(
      /^Your design changes 25% of the current design; this iteration allows at most 10%\./,
    );
  });

  it('refuses a proposal that still changes too much, keeping it in the outcome, and does not spend repairs on it', async () => {
    const { server, outcome } = await optimizerAgainst(
      [step.text(replyFor(designWithCritic())), step.text(replyFor(designWithCritic()))],
      { maxChangeFraction: 0.1, repairAttempts: 2 },
    );
    expect(server.requests).toHaveLength(2);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).toBe('change-bound-exceeded');
    expect(outcome.refusedProposal?.design).toEqual(designWithCritic());
  });

  it('lets a malformed answer to the bound be repaired', async () => {
    const { outcome } = await optimizerAgainst(
      [
        step.text(replyFor(designWithCritic())),
        step.text('{"design": '),
        step.text(replyFor(smallImprovement())),
      ],
      { maxChangeFraction: 0.1 },
    );
    expect(outcome.ok).toBe(true);
    expect(outcome.attempts.map((attempt) => attempt.purpose)).toEqual(['initial', 'change-bound', 'repair']);
  });
});
