import { afterEach, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { CallFailure } from '../../src/model/retry.js';
import type { ChatRequest, ChatStreamEvent } from '../../src/model/types.js';
import {
  startScriptedServer,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { unusedPort } from '../support/fixtures.js';

const fastRetries = { initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 4 };
const request: ChatRequest = {
  model: 'scripted-model',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hi.' },
  ],
  sampling: {
    temperature: 0.6,
    topP: 0.95,
    topK: 20,
    seed: 7,
    maxTokens: 512,
    extra: { chat_template_kwargs: { enable_thinking: true } },
  },
};

const servers: ScriptedServer[] = [];
async function start(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function modelFor(scripted: ScriptedServer, retries: CallFailure[] = [], timeoutMs?: number) {
  return new OpenAICompatibleModel({
    baseUrl: scripted.baseUrl,
    retry: fastRetries,
    timeoutMs,
    onRetry: (failure) => retries.push(failure),
  });
}

describe('OpenAI-compatible client', () => {
  it('sends sampling parameters and pass-through extras, and returns message, reasoning and usage', async () => {
    const server = await start({
      script: [
        step.text('hi', {
          reasoning: 'greet briefly',
          usage: { promptTokens: 11, completionTokens: 5, reasoningTokens: 3 },
        }),
      ],
    });
    const response = await modelFor(server).complete(request);
    expect(response.message).toEqual({
      role: 'assistant',
      content: 'hi',
      reasoning_content: 'greet briefly',
    });
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({
      promptTokens: 11,
      completionTokens: 5,
      reasoningTokens: 3,
      totalTokens: 16,
    });
    expect(server.requests[0]!.body).toMatchObject({
      model: 'scripted-model',
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      seed: 7,
      max_tokens: 512,
      chat_template_kwargs: { enable_thinking: true },
      stream: false,
    });
  });

  it('streams reasoning, text and tool-call deltas and finishes with the whole message', async () => {
    const reasoning = 'a long chain of thought that spans several chunks of the stream';
    const server = await start({
      chunkSize: 7,
      reasoningField: 'reasoning',
      script: [step.toolCall('agent', { prompt: 'audit the data' }, { content: 'Delegating.', reasoning })],
    });
    const events: ChatStreamEvent[] = [];
    for await (const event of modelFor(server).stream(request)) events.push(event);
    const finish = events.at(-1);
    expect(finish?.type).toBe('finish');
    if (finish?.type !== 'finish') return;
    expect(finish.response.message).toMatchObject({
      content: 'Delegating.',
      reasoning_content: reasoning,
      tool_calls: [
        { type: 'function', function: { name: 'agent', arguments: '{"prompt":"audit the data"}' } },
      ],
    });
    expect(finish.response.finishReason).toBe('tool_calls');
    expect(finish.response.usage?.completionTokens).toBeGreaterThan(0);
    const reasoningText = events
      .flatMap((event) => (event.type === 'reasoning-delta' ? [event.delta] : []))
      .join('');
    expect(reasoningText).toBe(reasoning);
    expect(events.filter((event) => event.type === 'reasoning-delta').length).toBeGreaterThan(5);
  });

  it('retries through 429 (honouring Retry-After), 503 and dropped connections, then succeeds', async () => {
    const server = await start({
      script: [
        step.status(429, { retryAfterSeconds: 0 }),
        step.status(503),
        step.drop(),
        step.text('finally'),
      ],
    });
    const retries: CallFailure[] = [];
    const response = await modelFor(server, retries).complete(request);
    expect(response.message.content).toBe('finally');
    expect(retries.map((failure) => failure.kind)).toEqual(['status', 'status', 'connection']);
    expect(server.requests).toHaveLength(4);
  });

  it('retries a malformed response and a stream dropped before its first token', async () => {
    const server = await start({
      script: [step.malformed(), step.text('ok'), step.drop(), step.text('streamed ok')],
    });
    const retries: CallFailure[] = [];
    const model = modelFor(server, retries);
    expect((await model.complete(request)).message.content).toBe('ok');
    const events: ChatStreamEvent[] = [];
    for await (const event of model.stream(request)) events.push(event);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      response: { message: { content: 'streamed ok' } },
    });
    expect(retries.map((failure) => failure.kind)).toEqual(['invalid-response', 'connection']);
  });

  it('gives up after the bound with a clear system error', async () => {
    const server = await start({ responder: () => step.status(503, { message: 'overloaded' }) });
    const failure = modelFor(server).complete(request);
    await expect(failure).rejects.toBeInstanceOf(SystemError);
    await expect(failure).rejects.toThrow(/kept failing after 4 attempts: last status 503: overloaded/);
    expect(server.requests).toHaveLength(4);
  });

  it('reports a stream cut mid-way as an error, not a short answer', async () => {
    const server = await start({ script: [step.drop({ afterChunks: 4 })] });
    const consume = async () => {
      for await (const _event of modelFor(server).stream(request));
    };
    await expect(consume()).rejects.toThrow(/mid-stream|connection failed|invalid response/);
  });

  it('times out a hung server within the request timeout, and says so', async () => {
    const server = await start({ responder: () => step.hang() });
    const model = new OpenAICompatibleModel({
      baseUrl: server.baseUrl,
      timeoutMs: 200,
      retry: { ...fastRetries, maxAttempts: 2 },
    });
    const started = Date.now();
    await expect(model.complete(request)).rejects.toThrow(
      /no complete answer within the request timeout after 2 attempts/,
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("OpenAI-compatible client: the user's mistakes", () => {
  it('names the served models when the model is unknown, without retrying', async () => {
    const server = await start({ models: ['qwen3-8b', 'qwen3-8b-L1'] });
    const model = modelFor(server);
    const failure = model.complete({ ...request, model: 'qwen3-8B' });
    await expect(failure).rejects.toBeInstanceOf(UserError);
    await expect(failure).rejects.toThrow(
      /answered 404: The model `qwen3-8B` does not exist.*serves: "qwen3-8b", "qwen3-8b-L1"/,
    );
    expect(server.requests.filter((received) => received.path.endsWith('/chat/completions'))).toHaveLength(1);
  });

  it('reports a refused connection as the user’s problem', async () => {
    const port = await unusedPort();
    const model = new OpenAICompatibleModel({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retry: { ...fastRetries, maxAttempts: 2 },
    });
    const failure = model.complete(request);
    await expect(failure).rejects.toBeInstanceOf(UserError);
    await expect(failure).rejects.toThrow(
      /cannot connect to openai-compatible http:\/\/127\.0\.0\.1:\d+\/v1 after 2 attempts \(ECONNREFUSED\): is the model server running/,
    );
  });

  it('refuses a base URL that is not a URL', () => {
    expect(() => new OpenAICompatibleModel({ baseUrl: 'localhost:8000' })).toThrow(UserError);
  });

  it('reports rejected credentials as the user’s problem', async () => {
    const server = await start({ script: [step.status(401, { message: 'invalid api key' })] });
    await expect(modelFor(server).complete(request)).rejects.toThrow(
      /refused the credentials \(401\).*Check the API key/,
    );
  });
});

describe('OpenAI-compatible client: concurrency', () => {
  it('keeps requests to one endpoint under its limit', async () => {
    let inFlight = 0;
    let peak = 0;
    const server = await start({
      responder: async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 30));
        inFlight--;
        return step.text('done');
      },
    });
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, maxConcurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => model.complete(request)));
    expect(server.requests).toHaveLength(12);
    expect(peak).toBe(3);
  });
});
