import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { startHostForwarder } from '../../src/episode/forwarder.js';
import { startRecordingProxy } from '../../src/proxy/recording-proxy.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import {
  postCompletion,
  readProxyLog,
  scriptedServerBehindProxy,
  sseData,
  temporaryDirectory,
  type ProxyFixture,
} from '../support/fixtures.js';
import { startBareUpstream } from './bare-upstream.js';
import { postEndlessBody, rawRequest, sendRaw } from './proxy-clients.js';

const KEY = 'sk-real-UPSTREAM-KEY-0123456789';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let fixture: ProxyFixture;
async function behindProxy(...options: Parameters<typeof scriptedServerBehindProxy>): Promise<ProxyFixture> {
  fixture = await scriptedServerBehindProxy(...options);
  cleanups.push(fixture.close);
  return fixture;
}

function proxyPort(): number {
  return Number(new URL(fixture.proxy.url).port);
}

describe('recording proxy: only the model API is forwarded', () => {
  it('refuses other paths and methods with a recorded reason, and the upstream never sees them', async () => {
    await behindProxy({}, { upstreamApiKey: KEY });
    const attacks: Array<[method: string, target: string, status: number]> = [
      ['DELETE', '/v1/files/file-123', 404],
      ['GET', '/v1/../../admin/secret', 400],
      ['GET', '/v1/%2e%2e/admin/secret', 400],
      ['GET', '/v1/load_lora_adapter', 404],
      ['POST', '/v1/load_lora_adapter', 404],
      ['GET', '/v1/models?limit=1', 400],
      ['POST', '/v1//chat/completions', 400],
      ['DELETE', '/v1/models', 405],
      ['GET', '/_mass/usage', 404],
    ];
    for (const [method, target, status] of attacks) {
      const response = await sendRaw(proxyPort(), rawRequest(method, target));
      expect(response.status, `${method} ${target}`).toBe(status);
      expect(response.body).toContain('mass proxy:');
    }
    expect(fixture.server.requests).toEqual([]);
    const rows = await fixture.waitForRows(attacks.length);
    for (const row of rows) {
      expect(row.refusal).toBe('not_forwarded');
      expect(row.error).toMatch(/refused: .*the proxy forwards only POST \/v1\/chat\/completions and GET/);
      expect(row.status).toBeGreaterThanOrEqual(400);
    }
    expect(rows.map((row) => `${row.method} ${row.path}`)).toEqual(
      attacks.map(([method, target]) => `${method} ${target}`),
    );
  });

  it('refuses them through the forwarder the sandbox reaches the proxy by, on its Unix socket', async () => {
    const server = await startScriptedServer();
    cleanups.push(() => server.close());
    const directory = temporaryDirectory('mass-sock-');
    cleanups.push(directory.remove);
    const socketPath = join(directory.path, 'proxy.sock');
    const proxy = await startRecordingProxy({
      upstream: server.baseUrl,
      listen: { socketPath },
      logFile: join(directory.path, 'requests.jsonl'),
      upstreamApiKey: KEY,
    });
    cleanups.push(() => proxy.close());
    const forwarder = await startHostForwarder(socketPath);
    cleanups.push(() => forwarder.close());
    for (const [method, target] of [
      ['DELETE', '/v1/files/file-123'],
      ['GET', '/v1/../../admin/secret'],
      ['GET', '/v1/load_lora_adapter'],
    ] as const) {
      const response = await sendRaw(forwarder.port, rawRequest(method, target));
      expect(response.status, `${method} ${target}`).toBeGreaterThanOrEqual(400);
    }
    expect(server.requests).toEqual([]);
    // Rows are written as requests end, which may be just after the client has its answer.
    const logFile = join(directory.path, 'requests.jsonl');
    await vi.waitUntil(() => readProxyLog(logFile).length === 3);
    expect(readProxyLog(logFile).map((row) => row.refusal)).toEqual([
      'not_forwarded',
      'not_forwarded',
      'not_forwarded',
    ]);
  });

  it('refuses /v1/completions, which no thread records, so an output budget cannot be spent around', async () => {
    await behindProxy(
      { responder: () => step.text('x'.repeat(4000), { usage: { completionTokens: 1000 } }) },
      { upstreamApiKey: KEY, outputBudget: 12 },
    );
    for (let call = 0; call < 5; call++) {
      const response = await fetch(`${fixture.proxy.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'scripted-model', prompt: 'count to 1000', max_tokens: 1000 }),
      });
      expect(response.status).toBe(404);
      await response.text();
    }
    expect(fixture.server.requests).toEqual([]);
    const rows = await fixture.waitForRows(5);
    expect(rows.every((row) => row.refusal === 'not_forwarded' && row.path === '/v1/completions')).toBe(true);
  });

  it('still forwards the harness’s calls, and its model listing, with the real key', async () => {
    await behindProxy({}, { upstreamApiKey: KEY });
    fixture.server.enqueue(step.text('hello'));
    const chat = await postCompletion(fixture.proxy.url, { stream: true });
    expect(sseData(await chat.text()).at(-1)).toBe('[DONE]');
    const models = await fetch(`${fixture.proxy.url}/v1/models`);
    expect(models.status).toBe(200);
    await models.text();
    expect(fixture.server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/chat/completions',
      'GET /v1/models',
    ]);
    expect(fixture.server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const rows = await fixture.waitForRows(2);
    expect(rows.map((row) => row.refusal)).toEqual([null, null]);
  });

  it('forwards none of the client’s other headers (method overrides, rewrites)', async () => {
    await behindProxy({}, { upstreamApiKey: KEY });
    fixture.server.enqueue(step.text('hello'));
    await (
      await postCompletion(
        fixture.proxy.url,
        {},
        { headers: { 'x-http-method-override': 'DELETE', 'x-original-url': '/admin', cookie: 'a=b' } },
      )
    ).text();
    const headers = fixture.server.requests[0]!.headers;
    expect(headers['x-http-method-override']).toBeUndefined();
    expect(headers['x-original-url']).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
  });
});

describe('recording proxy: every forwarded call is metered against the budget', () => {
  it('refuses a chat body whose stream flag a lenient server would read as true', async () => {
    await behindProxy({}, { outputBudget: 12 });
    for (const body of ['{"model": "m", "messages": [], "stream": "true"}', '[1, 2]', 'not json']) {
      const response = await fetch(`${fixture.proxy.url}/v1/chat/completions`, { method: 'POST', body });
      expect(response.status).toBe(400);
      await response.text();
    }
    expect(fixture.server.requests).toEqual([]);
    const rows = await fixture.waitForRows(3);
    expect(rows.map((row) => row.refusal)).toEqual(['malformed', 'malformed', 'malformed']);
  });

  it('meters the usage of an answer it cannot read as a completion', async () => {
    // An answer whose message does not parse (a number for content) still reports the tokens it cost.
    const upstream = await startBareUpstream((_request, response) => {
      const body = JSON.stringify({
        object: 'chat.completion',
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 5 }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1000, total_tokens: 1003 },
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    cleanups.push(upstream.close);
    const directory = temporaryDirectory();
    cleanups.push(directory.remove);
    const proxy = await startRecordingProxy({
      upstream: upstream.url,
      listen: { host: '127.0.0.1', port: 0 },
      logFile: join(directory.path, 'requests.jsonl'),
      outputBudget: 12,
    });
    cleanups.push(() => proxy.close());
    const statuses: number[] = [];
    for (let call = 0; call < 3; call++) {
      const response = await postCompletion(proxy.url, {});
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([200, 400, 400]);
    expect(upstream.calls()).toBe(1);
    expect(proxy.meter.completionTokens).toBe(1000);
  });
});

describe('recording proxy: bounded sizes', () => {
  it('refuses a body declared over the bound with 413, unread, and records it without the body', async () => {
    await behindProxy({}, { maxRequestBytes: 1024 });
    const response = await postCompletion(fixture.proxy.url, {
      messages: [{ role: 'user', content: 'x'.repeat(4096) }],
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain('over the bound of 1024 bytes');
    expect(fixture.server.requests).toEqual([]);
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({ status: 413, refusal: 'too_large', request: null, bytes: { request: 0 } });
  });

  it('answers 413 to a body without a length while it is still being sent, without buffering it whole', async () => {
    const bound = 1024 * 1024;
    const cap = 256 * 1024 * 1024;
    await behindProxy({}, { maxRequestBytes: bound });
    const { status, sentWhenAnswered } = await postEndlessBody(proxyPort(), '/v1/chat/completions', {
      chunkBytes: 64 * 1024,
      capBytes: cap,
    });
    expect(status).toBe(413);
    // The answer came long before the body was all sent: the proxy stopped reading at the bound.
    expect(sentWhenAnswered).toBeLessThan(cap / 4);
    expect(fixture.server.requests).toEqual([]);
    const [row] = await fixture.waitForRows(1);
    expect(row!.refusal).toBe('too_large');
    expect(row!.bytes.request).toBeGreaterThan(bound);
    expect(row!.bytes.request).toBeLessThan(bound + 1024 * 1024);
    expect(row!.request).toBeNull();
  });

  it('cuts a streamed answer over the bound, and records why', async () => {
    await behindProxy({}, { maxResponseBytes: 32 * 1024 });
    fixture.server.enqueue(step.text('many words '.repeat(20_000), { chunkSize: 64 }));
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const [row] = await fixture.waitForRows(1);
    expect(row!.error).toContain('upstream answer over the bound of 32768 bytes');
    expect(row!.bytes.response).toBeLessThan(64 * 1024);
  });

  it('answers 502 in place of a plain answer over the bound', async () => {
    await behindProxy({}, { maxResponseBytes: 32 * 1024 });
    fixture.server.enqueue(step.text('many words '.repeat(20_000)));
    const response = await postCompletion(fixture.proxy.url, {});
    expect(response.status).toBe(502);
    expect(await response.text()).toContain('over the bound of 32768 bytes');
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({ status: 502 });
    expect(row!.error).toContain('not relayed');
  });
});

describe('recording proxy: no request crashes it', () => {
  it('refuses an absolute-form request line in front of an upstream without /v1, and goes on serving', async () => {
    await behindProxy();
    // The fixture's upstream is the server's root (no /v1), where joining `http://evil/x` to it threw.
    expect(new URL(fixture.server.url).pathname).toBe('/');
    for (const target of ['http://evil/x', 'http://127.0.0.1:1/v1/chat/completions', '*']) {
      const response = await sendRaw(proxyPort(), rawRequest('GET', target));
      expect(response.status, target).toBe(400);
      expect(response.body).toContain('origin form');
    }
    fixture.server.enqueue(step.text('still here'));
    const response = await postCompletion(fixture.proxy.url, {});
    expect(await response.json()).toMatchObject({ choices: [{ message: { content: 'still here' } }] });
    const rows = await fixture.waitForRows(4);
    expect(rows.slice(0, 3).map((row) => row.refusal)).toEqual([
      'not_forwarded',
      'not_forwarded',
      'not_forwarded',
    ]);
    expect(fixture.server.requests).toHaveLength(1);
  });

  it('answers a request the HTTP parser cannot read with 400, records it, and goes on serving', async () => {
    await behindProxy();
    const garbage = await sendRaw(proxyPort(), 'HELLO THERE\r\n\r\n');
    expect(garbage.status).toBe(400);
    const badChunk = await sendRaw(
      proxyPort(),
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    );
    expect(badChunk.status).toBe(400);
    fixture.server.enqueue(step.text('still here'));
    expect((await postCompletion(fixture.proxy.url, {})).status).toBe(200);
    const rows = await fixture.waitForRows(3);
    const refused = rows.filter((row) => row.refusal === 'malformed');
    expect(refused).toHaveLength(2);
    expect(refused[0]!.error).toContain('malformed HTTP request');
  });
});
