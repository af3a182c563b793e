import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { episodeCost, episodeSpendFacts } from '../../src/cost/episode-cost.js';
import { meteredModel } from '../../src/cost/metered-model.js';
import { billedUsageOf } from '../../src/model/billed-usage.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { TokenUsage } from '../../src/model/types.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { startRecordingProxy } from '../../src/proxy/recording-proxy.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';

const PRICES = { input: 3, cachedInput: 0.3, output: 15 };
const servers: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function scripted(script: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer> {
  const server = await startScriptedServer(script);
  servers.push(server);
  return server;
}

function client(baseUrl: string, prices = PRICES, seen: TokenUsage[] = []) {
  const model = new OpenAICompatibleModel({
    baseUrl,
    retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 },
  });
  return meteredModel(model, { prices, onUsage: (usage) => void seen.push(usage) });
}

const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe("a call's cost", () => {
  it('is the cost the provider reports (usage.cost), marked reported, whatever the prices', async () => {
    const server = await scripted({
      script: [
        step.reply({ content: 'ok', usage: { promptTokens: 1000, completionTokens: 200, cost: 0.0123 } }),
      ],
    });
    const seen: TokenUsage[] = [];
    const response = await client(server.baseUrl, PRICES, seen).complete(ask);
    expect(response.usage).toMatchObject({ promptTokens: 1000, completionTokens: 200 });
    expect(response.usage!.cost).toEqual({ usd: 0.0123, source: 'reported' });
    expect(seen.map((usage) => usage.cost)).toEqual([{ usd: 0.0123, source: 'reported' }]);
  });

  it('is computed from the usage and the prices when the provider reports none, cached input at its own price', async () => {
    const server = await scripted({
      script: [
        step.reply({
          content: 'ok',
          usage: { promptTokens: 1000, completionTokens: 200, cachedTokens: 400 },
        }),
      ],
    });
    const response = await client(server.baseUrl).complete(ask);
    expect(response.usage!.cachedPromptTokens).toBe(400);
    // 600 × $3 + 400 × $0.30 + 200 × $15, per million tokens.
    expect(response.usage!.cost!.source).toBe('computed');
    expect(response.usage!.cost!.usd).toBeCloseTo((600 * 3 + 400 * 0.3 + 200 * 15) / 1e6, 12);
  });

  it('is unknown, never 0, without prices and without a reported cost', async () => {
    const server = await scripted({
      script: [step.reply({ content: 'ok', usage: { promptTokens: 10, completionTokens: 5 } })],
    });
    const model = meteredModel(new OpenAICompatibleModel({ baseUrl: server.baseUrl }), {});
    const response = await model.complete(ask);
    expect(response.usage).toMatchObject({ promptTokens: 10, completionTokens: 5 });
    expect(response.usage!.cost).toBeUndefined();
  });
});

/** A model server answering the n-th request (from 1) with `answer(n)` as JSON, status 200. */
async function jsonServer(
  answer: (n: number) => unknown,
): Promise<{ baseUrl: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(answer(requests)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests: () => requests };
}

describe('a retried call', () => {
  /** A server whose first answer is a 200 with usage and a cost but no completion (billed, then retried). */
  const billedThenAnswered = () =>
    jsonServer((n) => {
      const usage =
        n === 1
          ? { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, cost: 0.001 }
          : { prompt_tokens: 100, completion_tokens: 60, total_tokens: 160, cost: 0.002 };
      return n === 1
        ? { error: { message: 'provider error mid-generation' }, usage }
        : {
            id: 'c',
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage,
          };
    });

  it('counts every attempt the provider billed: an answer with usage that was retried is in the call usage', async () => {
    const server = await billedThenAnswered();
    const seen: TokenUsage[] = [];
    const response = await client(server.baseUrl, PRICES, seen).complete(ask);
    expect(server.requests()).toBe(2);
    expect(response.message.content).toBe('ok');
    expect(response.usage).toMatchObject({ promptTokens: 200, completionTokens: 100, billedAttempts: 2 });
    expect(response.usage!.cost!.source).toBe('reported');
    expect(response.usage!.cost!.usd).toBeCloseTo(0.003, 12);
    expect(seen).toHaveLength(1);
  });

  it('does not count an attempt whose connection failed: it was never answered', async () => {
    const server = await scripted({
      script: [
        step.drop({ afterChunks: 0 }),
        step.reply({ content: 'ok', usage: { promptTokens: 100, completionTokens: 60, cost: 0.002 } }),
      ],
    });
    const response = await client(server.baseUrl).complete(ask);
    expect(server.requests).toHaveLength(2);
    expect(response.usage!.billedAttempts).toBeUndefined();
    expect(response.usage).toMatchObject({ promptTokens: 100, completionTokens: 60 });
    expect(response.usage!.cost).toEqual({ usd: 0.002, source: 'reported' });
  });

  it('a call that fails in the end still hands on what its attempts were billed', async () => {
    const server = await jsonServer(() => ({ usage: { prompt_tokens: 50, completion_tokens: 10 } }));
    const seen: TokenUsage[] = [];
    const error = await client(server.baseUrl, PRICES, seen)
      .complete(ask)
      .catch((thrown: unknown) => thrown);
    expect(server.requests()).toBe(3);
    const billed = billedUsageOf(error);
    expect(billed).toMatchObject({ promptTokens: 150, completionTokens: 30, billedAttempts: 3 });
    expect(billed!.cost!.usd).toBeCloseTo((150 * 3 + 30 * 15) / 1e6, 12);
    expect(seen).toHaveLength(1);
  });
});

describe('through the recording proxy', () => {
  it("each row keeps the provider's cost beside its usage, and the meter sums what was reported", async () => {
    const server = await scripted({
      script: [
        step.reply({ content: 'a', usage: { promptTokens: 100, completionTokens: 10, cost: 0.0005 } }),
        step.reply({ content: 'b', usage: { promptTokens: 300, completionTokens: 30, cachedTokens: 200 } }),
      ],
    });
    const directory = await mkdtemp(join(tmpdir(), 'mass-cost-proxy-'));
    const logFile = join(directory, 'requests.jsonl');
    const proxy = await startRecordingProxy({
      upstream: server.baseUrl,
      listen: { host: '127.0.0.1', port: 0 },
      logFile,
    });
    try {
      for (const stream of [false, true]) {
        const response = await fetch(`${proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...ask, stream }),
        });
        await response.text();
      }
    } finally {
      await proxy.close();
    }
    const rows = await readProxyLog(logFile);
    const usages = rows.map((row) =>
      row.response?.kind === 'completion' ? row.response.completion.usage : null,
    );
    expect(usages[0]).toMatchObject({ prompt_tokens: 100, cost: 0.0005 });
    expect(usages[1]).toMatchObject({ prompt_tokens: 300, prompt_tokens_details: { cached_tokens: 200 } });
    expect(proxy.meter.snapshot()['m']).toMatchObject({
      requests: 2,
      promptTokens: 400,
      cachedPromptTokens: 200,
      reportedCostUsd: 0.0005,
      reportedCostCalls: 1,
    });
    await rm(directory, { recursive: true, force: true });
  });
});

describe("an episode's cost", () => {
  const usage = (cost?: number, cached = 0): TokenUsage => ({
    promptTokens: 1000,
    completionTokens: 100,
    reasoningTokens: 0,
    totalTokens: 1100,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(cost === undefined ? {} : { cost: { usd: cost, source: 'reported' as const } }),
  });
  const record = (facts: ReturnType<typeof episodeSpendFacts>) => ({
    usage: {
      total: { promptTokens: 2000, completionTokens: 200 },
      cachedPromptTokens: facts.cachedPromptTokens,
    },
    ...(facts.cost ? { cost: facts.cost } : {}),
  });

  it("is what the provider reported for every billed call, else computed from the record's tokens", () => {
    const reported = episodeSpendFacts([usage(0.01), null, usage(0.02, 500)]);
    expect(reported.cachedPromptTokens).toBe(500);
    expect(reported.cost!.usd).toBeCloseTo(0.03, 12);
    expect(episodeCost(record(reported), PRICES)).toEqual(reported.cost);

    // One call without a reported cost: the record holds none, and the sum is computed at the prices.
    const partial = episodeSpendFacts([usage(0.01), usage(undefined, 500)]);
    expect(partial.cost).toBeUndefined();
    const computed = episodeCost(record(partial), PRICES)!;
    expect(computed.source).toBe('computed');
    expect(computed.usd).toBeCloseTo((1500 * 3 + 500 * 0.3 + 200 * 15) / 1e6, 12);
    expect(episodeCost(record(partial), undefined)).toBeNull();
  });
});
