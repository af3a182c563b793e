import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { startRecordingProxy } from '../../src/proxy/recording-proxy.js';
import { upstreamRetryDelayMs, type UpstreamRetryPolicy } from '../../src/proxy/upstream-retry.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step, type Step } from '../../src/toy/steps.js';
import {
  postCompletion,
  readProxyLog,
  scriptedServerBehindProxy,
  sseData,
  temporaryDirectory,
  unusedPort,
} from '../support/fixtures.js';

interface ChunkJson {
  id: string;
  choices: Array<{ delta: { content?: string } }>;
}

const fast: Partial<UpstreamRetryPolicy> = { initialDelayMs: 10, maxDelayMs: 40, maxTotalMs: 10_000 };

describe('recording proxy: transient upstream failures before the first byte are retried', () => {
  it('answers once after 503s, a reset and a 502, and records every attempt in the row', async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: fast });
    try {
      fixture.server.enqueue(
        step.status(503, { message: 'loading the adapter' }),
        step.drop({ afterChunks: 0 }),
        step.status(502),
        step.text('finally'),
      );
      const response = await postCompletion(fixture.proxy.url, { stream: true });
      expect(response.status).toBe(200);
      const events = sseData(await response.text());
      expect(events.at(-1)).toBe('[DONE]');
      const [row] = await fixture.waitForRows(1);
      expect(row).toMatchObject({ status: 200, error: null, response: { kind: 'completion' } });
      expect(row!.response).toMatchObject({ completion: { message: { content: 'finally' } } });
      expect(row!.attempts!.map((attempt) => attempt.status)).toEqual([503, null, 502, 200]);
      expect(row!.attempts![0]!.error).toBe('upstream answered 503');
      expect(row!.attempts![1]!.error).toMatch(/socket hang up|ECONNRESET/);
      expect(row!.attempts!.slice(0, 3).every((attempt) => attempt.delayMs! > 0)).toBe(true);
      expect(row!.attempts![3]!.delayMs).toBeNull();
      expect(fixture.server.requests).toHaveLength(4);
    } finally {
      await fixture.close();
    }
  });

  it("waits as long as a 429's Retry-After asks", async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: fast });
    try {
      fixture.server.enqueue(step.status(429, { retryAfterSeconds: 1 }), step.text('after the wait'));
      const response = await postCompletion(fixture.proxy.url, {});
      expect(response.status).toBe(200);
      const [row] = await fixture.waitForRows(1);
      expect(row!.attempts![0]).toMatchObject({ status: 429, delayMs: 1000 });
      expect(
        fixture.server.requests[1]!.receivedAt - fixture.server.requests[0]!.receivedAt,
      ).toBeGreaterThanOrEqual(990);
    } finally {
      await fixture.close();
    }
  });

  it('gives up on a streamed call with no response head in time, and retries it', async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: { ...fast, responseHeadTimeoutMs: 300 } });
    try {
      fixture.server.enqueue(step.hang(), step.text('awake'));
      const response = await postCompletion(fixture.proxy.url, { stream: true });
      expect(response.status).toBe(200);
      await response.text();
      const [row] = await fixture.waitForRows(1);
      expect(row!.attempts!.map((attempt) => attempt.status)).toEqual([null, 200]);
      expect(row!.attempts![0]!.error).toContain('no response head within 0.3 s');
    } finally {
      await fixture.close();
    }
  });

  it('hands on the last failure once the attempts are spent, saying so', async () => {
    const fixture = await scriptedServerBehindProxy(
      { responder: () => step.status(503, { message: 'still loading' }) },
      { retry: { ...fast, maxAttempts: 3 } },
    );
    try {
      const response = await postCompletion(fixture.proxy.url, { stream: true });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { message: 'still loading' } });
      const [row] = await fixture.waitForRows(1);
      expect(row!.status).toBe(503);
      expect(row!.error).toMatch(/^upstream answered 503 \(gave up after 3 attempts over \d+\.\d s\)$/);
      expect(row!.attempts).toHaveLength(3);
      expect(row!.attempts!.at(-1)!.delayMs).toBeNull();
    } finally {
      await fixture.close();
    }
  });

  it('stops retrying when the call has taken its time bound', async () => {
    const fixture = await scriptedServerBehindProxy(
      { responder: () => step.status(500) },
      { retry: { initialDelayMs: 100, maxDelayMs: 100, maxTotalMs: 450, maxAttempts: 100 } },
    );
    try {
      const started = Date.now();
      const response = await postCompletion(fixture.proxy.url, {});
      expect(response.status).toBe(500);
      expect(Date.now() - started).toBeLessThan(5_000);
      const [row] = await fixture.waitForRows(1);
      // Waits of 50 to 100 ms within 450 ms: between 5 and 10 attempts, the last one at the bound at the latest.
      expect(row!.attempts!.length).toBeGreaterThanOrEqual(5);
      expect(row!.attempts!.length).toBeLessThanOrEqual(10);
      expect(row!.attempts!.at(-1)!.startedAfterMs).toBeLessThanOrEqual(450 + 50);
    } finally {
      await fixture.close();
    }
  });

  it('does not retry a status the same request would get again (400)', async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: fast });
    try {
      fixture.server.enqueue(step.status(400, { message: 'context length exceeded' }));
      expect((await postCompletion(fixture.proxy.url, {})).status).toBe(400);
      const [row] = await fixture.waitForRows(1);
      expect(row!.attempts).toHaveLength(1);
      expect(fixture.server.requests).toHaveLength(1);
    } finally {
      await fixture.close();
    }
  });

  const answer = 'one two three four five six seven eight';
  const cutAnswer: Step = { kind: 'reply', reply: { content: answer }, chunkSize: 4, cutAfterChunks: 3 };

  it('replays a stream cut mid-way and joins the replay to what the client has, when it says the same', async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: fast });
    try {
      fixture.server.enqueue(cutAnswer, step.text(answer, { chunkSize: 4 }));
      const response = await postCompletion(fixture.proxy.url, { stream: true });
      const events = sseData(await response.text());
      expect(events.at(-1)).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((data) => JSON.parse(data) as ChunkJson);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(answer);
      // One answer under one id, though the replay's chunks came with another.
      expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([chunks[0]!.id]));
      const [row] = await fixture.waitForRows(1);
      expect(row).toMatchObject({ status: 200, error: null });
      expect(row!.response).toMatchObject({ completion: { message: { content: answer } } });
      expect(row!.attempts!.map((attempt) => attempt.status)).toEqual([200, 200]);
      expect(row!.attempts![0]!.error).toMatch(/mid-response/);
      expect(fixture.server.requests).toHaveLength(2);
    } finally {
      await fixture.close();
    }
  });

  it('cuts the client off when the replay of a cut stream says something else', async () => {
    const fixture = await scriptedServerBehindProxy({}, { retry: fast });
    try {
      fixture.server.enqueue(cutAnswer, step.text('a different answer', { chunkSize: 4 }));
      const response = await postCompletion(fixture.proxy.url, { stream: true });
      await expect(response.text()).rejects.toThrow();
      const [row] = await fixture.waitForRows(1);
      expect(row!.error).toBe(
        'upstream dropped the connection mid-response; its replay differed from what was relayed at event 2',
      );
      expect(row!.attempts).toHaveLength(2);
    } finally {
      await fixture.close();
    }
  });

  it('rides out a server that is down, then comes up on its port', async () => {
    const directory = temporaryDirectory();
    const logFile = join(directory.path, 'requests.jsonl');
    const port = await unusedPort();
    const proxy = await startRecordingProxy({
      upstream: `http://127.0.0.1:${port}`,
      listen: { host: '127.0.0.1', port: 0 },
      logFile,
      retry: { initialDelayMs: 50, maxDelayMs: 100, maxTotalMs: 20_000 },
    });
    let server: Awaited<ReturnType<typeof startScriptedServer>> | undefined;
    try {
      const answered = postCompletion(proxy.url, { stream: true });
      await new Promise((resolve) => setTimeout(resolve, 400));
      server = await startScriptedServer({ port, script: [step.text('back again')] });
      const response = await answered;
      expect(response.status).toBe(200);
      await response.text();
    } finally {
      await proxy.close();
      await server?.close();
    }
    const [row] = readProxyLog(logFile);
    expect(row!.attempts!.length).toBeGreaterThan(2);
    expect(row!.attempts![0]!.error).toContain('ECONNREFUSED');
    expect(row!.attempts!.at(-1)!.status).toBe(200);
    directory.remove();
  });

  it('stops retrying when the client goes away during a wait', async () => {
    const fixture = await scriptedServerBehindProxy(
      { responder: () => step.status(503) },
      { retry: { initialDelayMs: 2_000, maxDelayMs: 2_000 } },
    );
    try {
      const abort = new AbortController();
      const response = postCompletion(fixture.proxy.url, {}, { signal: abort.signal });
      await new Promise((resolve) => setTimeout(resolve, 300));
      abort.abort();
      await expect(response).rejects.toThrow();
      const [row] = await fixture.waitForRows(1);
      expect(row!.clientDisconnected).toBe(true);
      expect(row!.attempts).toHaveLength(1);
      expect(fixture.server.requests).toHaveLength(1);
    } finally {
      await fixture.close();
    }
  });
});

describe('upstream retry delays', () => {
  const policy: UpstreamRetryPolicy = {
    maxAttempts: 5,
    maxTotalMs: 10_000,
    initialDelayMs: 1_000,
    maxDelayMs: 8_000,
    responseHeadTimeoutMs: null,
  };
  const failed = (status: number | null, retryAfterMs: number | null = null) => ({
    status,
    code: status === null ? 'ECONNRESET' : null,
    message: 'x',
    retryAfterMs,
  });

  it('backs off exponentially with jitter, honours Retry-After, and never waits past the bound', () => {
    expect(upstreamRetryDelayMs(failed(503), 1, 0, policy, () => 0)).toBe(500);
    expect(upstreamRetryDelayMs(failed(503), 3, 0, policy, () => 1)).toBe(4_000);
    expect(upstreamRetryDelayMs(failed(null), 4, 0, policy, () => 1)).toBe(8_000);
    expect(upstreamRetryDelayMs(failed(429, 3_000), 1, 0, policy)).toBe(3_000);
    expect(upstreamRetryDelayMs(failed(429, 60_000), 1, 1_000, policy)).toBe(9_000);
    expect(upstreamRetryDelayMs(failed(503), 5, 0, policy)).toBeNull();
    expect(upstreamRetryDelayMs(failed(503), 1, 10_000, policy)).toBeNull();
    expect(upstreamRetryDelayMs(failed(400), 1, 0, policy)).toBeNull();
    expect(upstreamRetryDelayMs(failed(404), 1, 0, policy)).toBeNull();
    expect(
      upstreamRetryDelayMs(
        { status: null, code: 'ENOTFOUND', message: 'x', retryAfterMs: null },
        1,
        0,
        policy,
      ),
    ).toBeNull();
  });
});
