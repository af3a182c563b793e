import { request } from 'node:http';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

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
  unusedPort,
} from '../support/fixtures.js';

describe('recording proxy, retries off: failures reach the client as errors and are recorded', () => {
  let fixture: ProxyFixture;
  beforeEach(async () => {
    fixture = await scriptedServerBehindProxy({}, { retry: { maxAttempts: 1 } });
  });
  afterEach(() => fixture.close());

  it('relays an upstream 500 and records it as a failed request', async () => {
    fixture.server.enqueue(step.status(500, { message: 'engine crashed' }));
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { message: 'engine crashed' } });
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({
      status: 500,
      response: { kind: 'json', body: { error: { message: 'engine crashed' } } },
    });
    expect(fixture.proxy.meter.snapshot()['scripted-model']).toMatchObject({
      requests: 1,
      failedRequests: 1,
    });
  });

  it('passes Retry-After through on a 429', async () => {
    fixture.server.enqueue(step.status(429, { retryAfterSeconds: 7 }));
    const response = await postCompletion(fixture.proxy.url, {});
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    await fixture.waitForRows(1);
  });

  it('cuts the client off when the upstream drops the connection mid-stream', async () => {
    fixture.server.enqueue(step.drop({ afterChunks: 3 }));
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const [row] = await fixture.waitForRows(1);
    expect(row!.error).toMatch(/upstream (dropped the connection|connection failed) mid-response/);
    expect(row!.response).toMatchObject({ kind: 'completion' });
  });

  it('answers 502 when the upstream drops the connection before responding', async () => {
    fixture.server.enqueue(step.drop({ afterChunks: 0 }));
    const response = await postCompletion(fixture.proxy.url, {});
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'mass proxy: upstream',
    );
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({ status: 502 });
    expect(row!.error).toContain('unreachable or failed');
  });

  it('records malformed JSON in a plain response', async () => {
    fixture.server.enqueue(step.malformed());
    const response = await postCompletion(fixture.proxy.url, {});
    expect(response.status).toBe(200);
    await expect(response.json()).rejects.toThrow();
    const [row] = await fixture.waitForRows(1);
    expect(row).toMatchObject({
      status: 200,
      error: 'response body is not valid JSON',
      response: { kind: 'text' },
    });
  });

  it('records a malformed event in a stream', async () => {
    fixture.server.enqueue(step.malformed());
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    await response.text();
    const [row] = await fixture.waitForRows(1);
    expect(row!.error).toMatch(/^malformed stream event/);
  });

  it('records a stream that ends before [DONE]', async () => {
    fixture.server.enqueue(step.truncate({ afterChunks: 4 }));
    const response = await postCompletion(fixture.proxy.url, { stream: true });
    const events = sseData(await response.text());
    expect(events).toHaveLength(4);
    const [row] = await fixture.waitForRows(1);
    expect(row!.error).toMatch(/^stream ended before \[DONE\]/);
  });

  it('records a client that disconnects mid-stream, and stops the upstream call', async () => {
    fixture.server.enqueue(step.text('a long answer '.repeat(20), { chunkSize: 4, chunkDelayMs: 20 }));
    const abort = new AbortController();
    const response = await postCompletion(fixture.proxy.url, { stream: true }, { signal: abort.signal });
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    const [row] = await fixture.waitForRows(1);
    expect(row!.clientDisconnected).toBe(true);
    expect(row!.error).toContain('client disconnected');
  });
});

describe('recording proxy: unreachable upstream', () => {
  it('answers 502 with a clear message and records it', async () => {
    const directory = temporaryDirectory();
    const logFile = join(directory.path, 'requests.jsonl');
    const port = await unusedPort();
    const proxy = await startRecordingProxy({
      upstream: `http://127.0.0.1:${port}`,
      listen: { host: '127.0.0.1', port: 0 },
      logFile,
      retry: { maxAttempts: 1 },
    });
    try {
      const response = await postCompletion(proxy.url, {});
      expect(response.status).toBe(502);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(
        /upstream http:\/\/127\.0\.0\.1:\d+ unreachable or failed: .*ECONNREFUSED/,
      );
    } finally {
      await proxy.close();
    }
    const [row] = readProxyLog(logFile);
    expect(row).toMatchObject({ status: 502, model: 'scripted-model' });
    directory.remove();
  });

  it('refuses an upstream that is not a URL', async () => {
    await expect(
      startRecordingProxy({
        upstream: 'localhost8000',
        listen: { host: '127.0.0.1', port: 0 },
        logFile: '/tmp/x.jsonl',
      }),
    ).rejects.toThrow(/--upstream "localhost8000" is not a URL/);
  });
});

describe('recording proxy: Unix socket', () => {
  it('serves clients on a socket path, for sandboxes without a network', async () => {
    const fixture = await scriptedServerBehindProxy();
    const directory = temporaryDirectory();
    const socketPath = join(directory.path, 'proxy.sock');
    const logFile = join(directory.path, 'requests.jsonl');
    const proxy = await startRecordingProxy({
      upstream: fixture.server.baseUrl,
      listen: { socketPath },
      logFile,
    });
    fixture.server.enqueue(step.text('over the socket'));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const outgoing = request(
          {
            socketPath,
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve(text));
          },
        );
        outgoing.on('error', reject);
        outgoing.end(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
      });
      expect(JSON.parse(body)).toMatchObject({ choices: [{ message: { content: 'over the socket' } }] });
      // An upstream given with /v1 does not double it.
      expect(fixture.server.requests[0]!.path).toBe('/v1/chat/completions');
    } finally {
      await proxy.close();
      await fixture.close();
    }
    expect(readProxyLog(logFile)).toHaveLength(1);
    directory.remove();
  });
});

describe('recording proxy: output budget', () => {
  it('refuses chat requests once the budget is spent, says so, and records the refusal', async () => {
    const server = await startScriptedServer({
      responder: () => step.text('some answer', { usage: { promptTokens: 10, completionTokens: 40 } }),
    });
    const directory = temporaryDirectory();
    const logFile = join(directory.path, 'requests.jsonl');
    const proxy = await startRecordingProxy({
      upstream: server.url,
      listen: { host: '127.0.0.1', port: 0 },
      logFile,
      outputBudget: 100,
    });
    try {
      const statuses: number[] = [];
      for (let call = 0; call < 4; call++) {
        const response = await postCompletion(proxy.url, { stream: call % 2 === 0 });
        statuses.push(response.status);
        await response.text();
      }
      expect(statuses).toEqual([200, 200, 200, 400]);
      expect(proxy.outputBudgetSpent).toBe(true);
      expect(server.requests).toHaveLength(3);
    } finally {
      await proxy.close();
      await server.close();
    }
    const rows = readProxyLog(logFile).sort((a, b) => a.seq - b.seq);
    expect(rows[3]).toMatchObject({
      status: 400,
      error: 'mass proxy: the output budget of 100 completion tokens is spent',
    });
    directory.remove();
  });
});
