import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { isRecord } from '../../src/model/stream-accumulator.js';
import { startRecordingProxy } from '../../src/proxy/recording-proxy.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import {
  postCompletion,
  scriptedServerBehindProxy,
  temporaryDirectory,
  type ProxyFixture,
} from '../support/fixtures.js';

function lastUserText(body: unknown): string {
  if (!isRecord(body) || !Array.isArray(body.messages)) return '';
  const last: unknown = body.messages.at(-1);
  return isRecord(last) && typeof last.content === 'string' ? last.content : '';
}

describe('recording proxy: many requests in flight', () => {
  let fixture: ProxyFixture;
  beforeEach(async () => {
    // Long replies make rows large, so torn or interleaved writes would show.
    fixture = await scriptedServerBehindProxy({
      chunkSize: 64,
      responder: (request) =>
        step.text(`${lastUserText(request.body)} `.repeat(400), {
          reasoning: 'r'.repeat(3000),
          delayMs: request.index % 7,
        }),
    });
  });
  afterEach(() => fixture.close());

  it('records 64 concurrent requests exactly once each, none torn', async () => {
    const count = 64;
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const response = await postCompletion(fixture.proxy.url, {
          stream: index % 2 === 0,
          messages: [{ role: 'user', content: `marker-${index}` }],
        });
        await response.text();
      }),
    );
    const rows = await fixture.waitForRows(count);
    const lines = readFileSync(fixture.logFile, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(count);
    expect(new Set(rows.map((row) => row.seq)).size).toBe(count);
    expect(rows.map((row) => row.seq).sort((a, b) => a - b)).toEqual([...Array(count).keys()]);
    for (const row of rows) {
      const marker = lastUserText(row.request);
      expect(row.error).toBeNull();
      expect(row.response).toMatchObject({ kind: 'completion' });
      if (row.response?.kind !== 'completion') continue;
      expect(row.response.completion.message.content).toBe(`${marker} `.repeat(400));
      expect(row.response.completion.message.reasoning_content).toHaveLength(3000);
    }
    expect(fixture.proxy.meter.snapshot()['scripted-model']!.requests).toBe(count);
  });
});

describe('recording proxy: secrets', () => {
  let fixture: ProxyFixture;
  beforeEach(async () => {
    fixture = await scriptedServerBehindProxy();
  });
  afterEach(() => fixture.close());

  it('forwards the Authorization header but never writes the key to the log, even when echoed', async () => {
    const key = 'sk-live-TOPSECRET-0123456789';
    fixture.server.enqueue(step.status(401, { message: `Incorrect API key provided: ${key}` }));
    fixture.server.enqueue(step.text(`you said ${key}`));
    const headers = { authorization: `Bearer ${key}`, 'x-api-key': key };
    await (await postCompletion(fixture.proxy.url, {}, { headers })).text();
    await (
      await postCompletion(
        fixture.proxy.url,
        { stream: true, messages: [{ role: 'user', content: `my key is ${key}` }] },
        { headers },
      )
    ).text();
    await fixture.waitForRows(2);
    expect(fixture.server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`);
    const log = readFileSync(fixture.logFile, 'utf8');
    expect(log).not.toContain('TOPSECRET');
    expect(log).not.toMatch(/authorization/i);
    expect(log).toContain('[REDACTED]');
  });
});

describe('recording proxy: a key held by the proxy alone', () => {
  it('sends its own key upstream in place of the client’s, and keeps it out of the log', async () => {
    const server = await startScriptedServer({
      responder: (request) =>
        step.status(401, { message: `bad key ${String(request.headers.authorization)}` }),
    });
    const directory = temporaryDirectory();
    const logFile = join(directory.path, 'requests.jsonl');
    const proxy = await startRecordingProxy({
      upstream: server.url,
      listen: { host: '127.0.0.1', port: 0 },
      logFile,
      upstreamApiKey: 'sk-real-UPSTREAM-KEY-42',
    });
    try {
      await (
        await postCompletion(proxy.url, {}, { headers: { authorization: 'Bearer sandbox-dummy' } })
      ).text();
      expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-real-UPSTREAM-KEY-42');
    } finally {
      await proxy.close();
      await server.close();
    }
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('bad key Bearer [REDACTED]');
    expect(log).not.toContain('UPSTREAM-KEY');
    directory.remove();
  });
});
