import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';

import { step } from '../../src/toy/steps.js';
import {
  postCompletion,
  scriptedServerBehindProxy,
  sseData,
  type ProxyFixture,
} from '../support/fixtures.js';

const reasoning = 'First I check the data — then the model. ünïcödé thinking split over many chunks.';
const content = 'I will delegate the data audit to a subagent.';
const toolCalls = [
  {
    id: 'call_a',
    name: 'agent',
    arguments: { description: 'audit', prompt: 'Check for leakage in data/prices.csv' },
  },
  { id: 'call_b', name: 'run_shell_command', arguments: { command: 'ls -la /tmp/ws' } },
];
const expectedMessage = {
  role: 'assistant',
  content,
  reasoning_content: reasoning,
  tool_calls: toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  })),
};

describe('recording proxy: exchanges are recorded exactly', () => {
  let fixture: ProxyFixture;
  beforeEach(async () => {
    fixture = await scriptedServerBehindProxy({ chunkSize: 5 });
  });
  afterEach(() => fixture.close());

  it('reassembles a streamed reply with reasoning and tool calls into the message the server meant', async () => {
    fixture.server.enqueue(
      step.toolCalls(toolCalls, {
        content,
        reasoning,
        usage: { promptTokens: 120, completionTokens: 80, reasoningTokens: 30 },
      }),
    );
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.length).toBeGreaterThan(20);
    // The proxy asked for usage the client did not, and kept the usage chunk from the client.
    expect(events.some((data) => data.includes('"usage"'))).toBe(false);
    expect(fixture.server.requests[0]!.body).toMatchObject({ stream_options: { include_usage: true } });

    const [row] = await fixture.waitForRows(1);
    expect(row!.stream).toBe(true);
    expect(row!.usageInjected).toBe(true);
    expect(row!.error).toBeNull();
    expect(row!.status).toBe(200);
    expect(row!.request).toMatchObject({ model: 'scripted-model', stream: true });
    expect(row!.request).not.toHaveProperty('stream_options');
    expect(row!.response).toEqual({
      kind: 'completion',
      completion: {
        id: 'scripted-1',
        model: 'scripted-model',
        message: expectedMessage,
        finish_reason: 'tool_calls',
        usage: {
          prompt_tokens: 120,
          completion_tokens: 80,
          total_tokens: 200,
          completion_tokens_details: { reasoning_tokens: 30 },
        },
      },
    });
    expect(fixture.proxy.meter.snapshot()).toEqual({
      'scripted-model': {
        requests: 1,
        failedRequests: 0,
        promptTokens: 120,
        completionTokens: 80,
        reasoningTokens: 30,
      },
    });
  });

  it('records a non-streamed reply with reasoning and tool calls', async () => {
    fixture.server.enqueue(step.toolCalls(toolCalls, { content, reasoning }));
    const response = await postCompletion(fixture.proxy.url, {});
    const body = (await response.json()) as { choices: Array<{ message: unknown }> };
    expect(body.choices[0]!.message).toEqual(expectedMessage);
    const [row] = await fixture.waitForRows(1);
    expect(row!.stream).toBe(false);
    expect(row!.usageInjected).toBe(false);
    expect(row!.response).toMatchObject({
      kind: 'completion',
      completion: { message: expectedMessage, finish_reason: 'tool_calls' },
    });
    expect(row!.bytes.response).toBe(Buffer.byteLength(JSON.stringify(body)));
  });

  it('relays a usage chunk to a client that asked for it', async () => {
    fixture.server.enqueue(step.text('hi there'));
    const response = await postCompletion(fixture.proxy.url, {
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = sseData(await response.text());
    expect(events.filter((data) => data.includes('"usage"'))).toHaveLength(1);
    const [row] = await fixture.waitForRows(1);
    expect(row!.usageInjected).toBe(false);
    expect(row!.response).toMatchObject({ completion: { message: { content: 'hi there' } } });
  });

  it('relays chunks as they arrive: the client reads the first token before the upstream has finished', async () => {
    fixture.server.enqueue(step.text('one two three four five six', { chunkSize: 4, chunkDelayMs: 60 }));
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('data:');
    // The request has not ended: nothing is recorded yet.
    expect(fixture.rows()).toHaveLength(0);
    while (!(await reader.read()).done);
    const [row] = await fixture.waitForRows(1);
    expect(row!.durationMs).toBeGreaterThan(300);
    expect(row!.response).toMatchObject({
      completion: { message: { content: 'one two three four five six' } },
    });
  });

  it('relays other paths and methods, and records their JSON', async () => {
    const response = await fetch(`${fixture.proxy.url}/v1/models`);
    expect(await response.json()).toMatchObject({ data: [{ id: 'scripted-model' }] });
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({
      method: 'GET',
      path: '/v1/models',
      status: 200,
      request: null,
      stream: false,
    });
    expect(row!.response).toMatchObject({ kind: 'json', body: { object: 'list' } });
  });

  it('keeps one line per row for pretty-printed and non-JSON request bodies', async () => {
    fixture.server.enqueue(step.text('pretty'));
    const pretty = JSON.stringify(
      { model: 'scripted-model', messages: [{ role: 'user', content: 'a\nb' }] },
      null,
      2,
    );
    await (
      await fetch(`${fixture.proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: pretty,
      })
    ).text();
    await (
      await fetch(`${fixture.proxy.url}/v1/chat/completions`, { method: 'POST', body: 'not json' })
    ).text();
    const rows = await fixture.waitForRows(2);
    const bySeq = rows.sort((a, b) => a.seq - b.seq);
    expect(bySeq[0]).toMatchObject({ requestIsJson: true, request: { messages: [{ content: 'a\nb' }] } });
    expect(bySeq[1]).toMatchObject({ requestIsJson: false, request: 'not json', status: 400 });
  });

  it('serves the running token totals on its own path, when asked to (mass proxy does)', async () => {
    const usage = await scriptedServerBehindProxy({}, { serveUsage: true });
    onTestFinished(() => usage.close());
    usage.server.enqueue(step.text('a', { usage: { promptTokens: 10, completionTokens: 3 } }));
    usage.server.enqueue(
      step.text('b', { usage: { promptTokens: 20, completionTokens: 4, reasoningTokens: 2 } }),
    );
    await (await postCompletion(usage.proxy.url, { stream: true })).text();
    await (await postCompletion(usage.proxy.url, {})).text();
    await usage.waitForRows(2);
    const totals = await (await fetch(`${usage.proxy.url}/_mass/usage`)).json();
    expect(totals).toEqual({
      'scripted-model': {
        requests: 2,
        failedRequests: 0,
        promptTokens: 30,
        completionTokens: 7,
        reasoningTokens: 2,
      },
    });
  });
});
