import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';

import { afterEach, describe, expect, it } from 'vitest';

import { isRecord } from '../../src/model/stream-accumulator.js';
import { startRecordingProxy, type RecordingProxy } from '../../src/proxy/recording-proxy.js';
import { step } from '../../src/toy/steps.js';
import {
  postCompletion,
  scriptedServerBehindProxy,
  sseData,
  temporaryDirectory,
} from '../support/fixtures.js';
import { startBareUpstream } from './bare-upstream.js';

/** The key the proxy holds; a `/`, `+` and `=` give it JSON-escaped and percent-encoded forms of its own. */
const KEY = 'sk-real/UPSTREAM+KEY=0123456789';
const FORMS = [KEY, KEY.replaceAll('/', '\\/'), encodeURIComponent(KEY), 'UPSTREAM'];

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Nothing the harness received holds the key, in any form, as sent or once JSON is decoded. */
function expectNoKey(text: string): void {
  for (const form of FORMS) expect(text).not.toContain(form);
  for (const data of sseData(text).filter((event) => event !== '[DONE]')) {
    try {
      expect(JSON.stringify(JSON.parse(data))).not.toContain(KEY);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
}

/** What a client joining the stream's deltas reads: each choice's content, and its first tool call's arguments. */
function joined(text: string): { content: string; arguments: string } {
  let content = '';
  let args = '';
  for (const data of sseData(text)) {
    if (data === '[DONE]') continue;
    const chunk: unknown = JSON.parse(data);
    if (!isRecord(chunk) || !Array.isArray(chunk.choices)) continue;
    for (const choice of chunk.choices as unknown[]) {
      if (!isRecord(choice) || !isRecord(choice.delta)) continue;
      if (typeof choice.delta.content === 'string') content += choice.delta.content;
      const calls = choice.delta.tool_calls;
      if (Array.isArray(calls) && isRecord(calls[0]) && isRecord(calls[0].function)) {
        const piece = calls[0].function.arguments;
        if (typeof piece === 'string') args += piece;
      }
    }
  }
  return { content, arguments: args };
}

async function echoingServer(chunkSize: number) {
  // The upstream says back the Authorization it received: the real key, which the harness must not see.
  const fixture = await scriptedServerBehindProxy(
    {
      chunkSize,
      responder: (request) => step.text(`you sent ${String(request.headers.authorization)}, thanks`),
    },
    { upstreamApiKey: KEY },
  );
  cleanups.push(fixture.close);
  return fixture;
}

async function proxyInFront(upstream: string): Promise<RecordingProxy> {
  const directory = temporaryDirectory();
  cleanups.push(directory.remove);
  const proxy = await startRecordingProxy({
    upstream,
    listen: { host: '127.0.0.1', port: 0 },
    logFile: join(directory.path, 'requests.jsonl'),
    upstreamApiKey: KEY,
    retry: { maxAttempts: 1 },
  });
  cleanups.push(() => proxy.close());
  return proxy;
}

describe('recording proxy: the key it holds never reaches the harness', () => {
  it('scrubs a key echoed in a plain JSON answer', async () => {
    const fixture = await echoingServer(16);
    const response = await postCompletion(fixture.proxy.url, {});
    const text = await response.text();
    expectNoKey(text);
    expect(JSON.parse(text)).toMatchObject({
      choices: [{ message: { content: 'you sent Bearer [REDACTED], thanks' } }],
    });
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(fixture.server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    await fixture.waitForRows(1);
    expect(readFileSync(fixture.logFile, 'utf8')).not.toContain('UPSTREAM');
  });

  it('scrubs a key split over many stream deltas, holding back only what could begin it', async () => {
    for (const chunkSize of [1, 3, 5, 7]) {
      const fixture = await echoingServer(chunkSize);
      const text = await (await postCompletion(fixture.proxy.url, { stream: true })).text();
      expectNoKey(text);
      expect(joined(text).content).toBe('you sent Bearer [REDACTED], thanks');
      expect(sseData(text).at(-1)).toBe('[DONE]');
    }
  });

  it('scrubs a key split over the deltas of a tool call’s arguments', async () => {
    const fixture = await scriptedServerBehindProxy(
      {
        chunkSize: 4,
        responder: (request) =>
          step.toolCall('run_shell_command', { command: `echo ${String(request.headers.authorization)}` }),
      },
      { upstreamApiKey: KEY },
    );
    cleanups.push(fixture.close);
    const text = await (await postCompletion(fixture.proxy.url, { stream: true })).text();
    expectNoKey(text);
    expect(JSON.parse(joined(text).arguments)).toEqual({ command: 'echo Bearer [REDACTED]' });
  });

  it('hands on, whole and in order, text that only began like the key', async () => {
    const almost = `${KEY.slice(0, 12)}!`;
    const fixture = await scriptedServerBehindProxy(
      { chunkSize: 3, script: [step.text(`a ${almost} b`), step.text(`ends in ${KEY.slice(0, 12)}`)] },
      { upstreamApiKey: KEY },
    );
    cleanups.push(fixture.close);
    const first = await (await postCompletion(fixture.proxy.url, { stream: true })).text();
    expect(joined(first).content).toBe(`a ${almost} b`);
    const second = await (await postCompletion(fixture.proxy.url, { stream: true })).text();
    expect(joined(second).content).toBe(`ends in ${KEY.slice(0, 12)}`);
  });

  it('scrubs a key in one stream event, split over two network chunks, JSON-escaped, and in headers', async () => {
    const escaped = KEY.replaceAll('/', '\\/').replace('s', '\\u0073');
    const upstream = await startBareUpstream(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-echo': `key=${KEY}` });
      const event = (content: string) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
      response.write(event(`whole ${KEY} `));
      const split = event(`split ${KEY} `);
      const cut = split.indexOf('UPSTREAM') + 3;
      response.write(split.slice(0, cut));
      await sleep(20);
      response.write(split.slice(cut));
      response.write(
        `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"escaped ${escaped}"},"finish_reason":null}]}\n\n`,
      );
      response.write(`: a comment with ${KEY}\n\n`);
      response.write(
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      );
      response.end('data: [DONE]\n\n');
    });
    cleanups.push(upstream.close);
    const proxy = await proxyInFront(upstream.url);
    const response = await postCompletion(proxy.url, { stream: true });
    const text = await response.text();
    expectNoKey(text);
    expect(response.headers.get('x-echo')).toBe('key=[REDACTED]');
    expect(joined(text).content).toBe('whole [REDACTED] split [REDACTED] escaped [REDACTED]');
  });

  it('relays no compressed answer, which the scrubber could not read: the key would pass in it', async () => {
    const upstream = await startBareUpstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(gzipSync(JSON.stringify({ choices: [{ message: { role: 'assistant', content: KEY } }] })));
    });
    cleanups.push(upstream.close);
    const proxy = await proxyInFront(upstream.url);
    const response = await postCompletion(proxy.url, { stream: false });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-encoding')).toBeNull();
    const text = await response.text();
    expectNoKey(text);
    expect(text).toContain('content-encoding gzip');
  });

  it('scrubs a key in error answers: JSON with escapes, percent-encoded text, and a retried 503', async () => {
    const answers = [
      {
        status: 401,
        type: 'application/json',
        body: `{"error":{"message":"bad key \\u0073${KEY.slice(1).replaceAll('/', '\\/')}"}}`,
      },
      { status: 400, type: 'text/plain', body: `bad request for key ${encodeURIComponent(KEY)}` },
      {
        status: 503,
        type: 'application/json',
        body: JSON.stringify({ error: { message: `down; key ${KEY}` } }),
      },
    ];
    let next = 0;
    const upstream = await startBareUpstream((_request, response) => {
      const answer = answers[next++]!;
      response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
    });
    cleanups.push(upstream.close);
    const proxy = await proxyInFront(upstream.url);
    for (const answer of answers) {
      const response = await postCompletion(proxy.url, {});
      expect(response.status).toBe(answer.status);
      const text = await response.text();
      expectNoKey(text);
      expect(text).toContain('[REDACTED]');
    }
  });
});
