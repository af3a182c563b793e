import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { AnthropicModel } from '../../src/model/anthropic.js';
import { createChatModel } from '../../src/model/create-model.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { ChatMessage, SamplingParams } from '../../src/model/types.js';
import { proposeWorkflow } from '../../src/optimizer/propose-workflow.js';
import { judgeAndOptimizerSampling } from '../../src/search/search-config.js';
import {
  startScriptedServer,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { strictRejection } from '../../src/testing/strict-requests.js';
import { optimizerInput, replyFor, smallImprovement } from '../optimizer/support.js';

const servers: ScriptedServer[] = [];
async function start(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const server = await startScriptedServer(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const noRetries = { maxAttempts: 1 };
/** A repair turn: the earlier answer, with the reasoning vLLM returned beside it. */
const messages: ChatMessage[] = [
  { role: 'system', content: 'You judge.' },
  { role: 'user', content: 'Compare A and B.' },
  { role: 'assistant', content: 'A', reasoning_content: 'A has the ablation' },
  { role: 'user', content: 'Answer in JSON.' },
];
/** The paper's settings for a judge on vLLM. */
const paper: SamplingParams = {
  temperature: 0.6,
  topP: 0.95,
  topK: 20,
  maxTokens: 49_152,
  enableThinking: true,
};

describe('strict mode of the scripted server', () => {
  it('refuses fields each real API refuses, with that API’s 400', async () => {
    const post = async (server: ScriptedServer, path: string, body: unknown, headers = {}) => {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    };
    const openai = await start({ strict: 'openai' });
    expect(await post(openai, '/v1/chat/completions', { model: 'm', messages: [], top_k: 20 })).toEqual({
      status: 400,
      body: {
        error: {
          message: 'Unrecognized request argument supplied: top_k',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    });
    expect(
      await post(openai, '/v1/chat/completions', { model: 'm', messages: [], max_tokens: 9 }),
    ).toMatchObject({
      status: 400,
      body: { error: { param: 'max_tokens', code: 'unsupported_parameter' } },
    });
    const anthropic = await start({ strict: 'anthropic' });
    expect(
      await post(
        anthropic,
        '/v1/messages',
        { model: 'c', max_tokens: 10, messages: [], temperature: 1 },
        { 'anthropic-version': '2026-10-21' },
      ),
    ).toMatchObject({
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'temperature: Extra inputs are not permitted' },
      },
    });
    const vllm = await start({ strict: 'openai-compatible', maxModelLength: 4096 });
    expect(
      await post(vllm, '/v1/chat/completions', { model: 'm', messages: [], max_tokens: 8192 }),
    ).toMatchObject({ status: 400, body: { error: { message: /maximum context length is 4096 tokens/ } } });
    expect([openai, anthropic, vllm].map((server) => server.rejected.length)).toEqual([2, 1, 1]);
  });
});

describe('each provider is sent only what it accepts', () => {
  it('the executor: every request qwen-code 0.24.4 sent in the recorded episode passes vLLM’s strict mode', () => {
    const rows = readFileSync('test/fixtures/qwen-code-0.24.4/requests.jsonl', 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { request: Record<string, unknown> });
    expect(rows.length).toBeGreaterThan(3);
    expect(rows[0]!.request).toMatchObject({ top_k: 20, chat_template_kwargs: { enable_thinking: true } });
    for (const row of rows) {
      expect(
        strictRejection({ provider: 'openai-compatible' }, { body: row.request, headers: {} }),
      ).toBeNull();
    }
    // The same requests would be refused by OpenAI's own API: the reason the executor must be on vLLM.
    expect(strictRejection({ provider: 'openai' }, { body: rows[0]!.request, headers: {} })).not.toBeNull();
  });

  it('vLLM gets the paper’s full set, the thinking switch in chat_template_kwargs', async () => {
    const server = await start({ strict: 'openai-compatible', script: [step.text('A')] });
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: noRetries });
    await model.complete({ model: 'qwen', messages, sampling: { ...paper, seed: 3 } });
    expect(server.rejected).toHaveLength(0);
    expect(server.requests[0]!.body).toMatchObject({
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      seed: 3,
      max_tokens: 49_152,
      chat_template_kwargs: { enable_thinking: true },
      messages: [{}, {}, { reasoning_content: 'A has the ablation' }, {}],
    });
  });

  it('OpenAI gets max_completion_tokens and reasoning_effort, and no reasoning_content in its messages', async () => {
    const server = await start({ strict: 'openai', script: [step.text('A')] });
    const model = createChatModel({ provider: 'openai', baseUrl: server.baseUrl });
    await model.complete({
      model: 'gpt-judge',
      messages,
      sampling: { maxTokens: 32_000, reasoningEffort: 'high', seed: 3 },
    });
    expect(server.rejected).toHaveLength(0);
    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_completion_tokens: 32_000, reasoning_effort: 'high', seed: 3 });
    expect(body).not.toHaveProperty('max_tokens');
    expect(body.messages).toEqual(messages.map(({ reasoning_content: _r, ...rest }) => rest));
  });

  it('an openai-compatible endpoint on api.openai.com is OpenAI’s own API', () => {
    const model = new OpenAICompatibleModel({ baseUrl: 'https://api.openai.com/v1' });
    expect(model.dialect).toBe('openai');
    expect(model.endpoint).toBe('openai https://api.openai.com/v1');
  });

  it('refuses the paper’s Qwen settings for OpenAI before sending anything', async () => {
    const server = await start({ strict: 'openai', script: [] });
    const model = createChatModel({ provider: 'openai', baseUrl: server.baseUrl });
    const refused = model.complete({ model: 'gpt-judge', messages, sampling: paper });
    await expect(refused).rejects.toThrow(UserError);
    await expect(refused).rejects.toThrow(
      /OpenAI's chat API does not accept topK; .*does not accept enableThinking/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('Anthropic gets max_tokens, its thinking and effort, and no sampling parameters', async () => {
    const server = await start({
      strict: 'anthropic',
      script: [
        step.text('A', { reasoning: 'weighing', usage: { promptTokens: 30, completionTokens: 12 } }),
        step.text('B'),
      ],
    });
    const model = new AnthropicModel({ apiKey: 'sk-ant-test', baseUrl: server.url, retry: noRetries });
    const response = await model.complete({
      model: 'claude-judge',
      messages,
      sampling: { maxTokens: 32_000, thinking: { budgetTokens: 16_000 }, stop: ['END'] },
    });
    expect(response.message.content).toBe('A');
    await model.complete({
      model: 'claude-judge',
      messages,
      sampling: { maxTokens: 32_000, thinking: 'adaptive', reasoningEffort: 'high' },
    });
    expect(server.rejected).toHaveLength(0);
    const [first, second] = server.requests.map((request) => request.body as Record<string, unknown>);
    expect(first).toMatchObject({
      max_tokens: 32_000,
      thinking: { type: 'enabled', budget_tokens: 16_000 },
      stop_sequences: ['END'],
      system: 'You judge.',
    });
    expect(second).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    for (const body of [first, second]) {
      for (const field of ['temperature', 'top_p', 'top_k', 'chat_template_kwargs']) {
        expect(body).not.toHaveProperty(field);
      }
    }
  });

  it('refuses sampling parameters and a thinking budget at or above max_tokens for Anthropic', async () => {
    const server = await start({ strict: 'anthropic', script: [] });
    const model = new AnthropicModel({ apiKey: 'k', baseUrl: server.url, retry: noRetries });
    await expect(model.complete({ model: 'c', messages, sampling: paper })).rejects.toThrow(
      /Anthropic's Messages API does not accept temperature; .*topP; .*topK; .*enableThinking/,
    );
    await expect(
      model.complete({
        model: 'c',
        messages,
        sampling: { maxTokens: 2000, thinking: { budgetTokens: 2000 } },
      }),
    ).rejects.toThrow(/thinking budget \(2000\) must be below the output bound max_tokens \(2000\)/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('roles on OpenAI and Anthropic, as configured', () => {
  it('the optimizer on OpenAI and on Anthropic: the configured roles’ requests pass strict mode, repairs included', async () => {
    const openai = await start({
      strict: 'openai',
      script: [step.text('not JSON'), step.text(replyFor(smallImprovement()))],
    });
    const anthropic = await start({ strict: 'anthropic', script: [step.text(replyFor(smallImprovement()))] });
    const config = parseRunConfig(
      {
        name: 'r',
        suite: 's',
        roles: {
          executor: { model: 'qwen', baseUrl: 'http://127.0.0.1:8000/v1' },
          judge: { provider: 'anthropic', model: 'claude', sampling: { thinking: { budgetTokens: 8000 } } },
          optimizer: { provider: 'openai', model: 'gpt', sampling: { reasoningEffort: 'high' } },
        },
      },
      'config.yaml',
    );
    const sampling = judgeAndOptimizerSampling(config);
    const viaOpenAI = await proposeWorkflow(
      createChatModel({ provider: 'openai', baseUrl: openai.baseUrl }),
      optimizerInput(),
      { modelName: 'gpt', sampling: sampling.optimizer },
    );
    expect(viaOpenAI.ok).toBe(true);
    expect(openai.requests).toHaveLength(2);
    // The judge's settings on an Anthropic model, used for an optimizer call here: what matters is the request.
    const viaAnthropic = await proposeWorkflow(
      new AnthropicModel({ apiKey: 'k', baseUrl: anthropic.url, retry: noRetries }),
      optimizerInput(),
      { modelName: 'claude', sampling: sampling.judge },
    );
    expect(viaAnthropic.ok).toBe(true);
    expect([openai.rejected.length, anthropic.rejected.length]).toEqual([0, 0]);
    expect(openai.requests[1]!.body).toMatchObject({
      max_completion_tokens: 49_152,
      reasoning_effort: 'high',
    });
    expect(anthropic.requests[0]!.body).toMatchObject({
      max_tokens: 49_152,
      thinking: { type: 'enabled', budget_tokens: 8000 },
    });
  });
});

describe('served context length', () => {
  it('reads vLLM’s max_model_len from /v1/models, and null where a server lists none', async () => {
    const listed = await start({ models: ['qwen'], maxModelLength: 131_072 });
    const plain = await start({ models: ['qwen'] });
    const served = (server: ScriptedServer) =>
      new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: noRetries }).servedModels();
    expect(await served(listed)).toEqual([{ id: 'qwen', maxModelLength: 131_072 }]);
    expect(await served(plain)).toEqual([{ id: 'qwen', maxModelLength: null }]);
  });
});
