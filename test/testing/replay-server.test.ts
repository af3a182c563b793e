import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { readProxyLog, type ProxyLogRow } from '../../src/proxy/log-row.js';
import { startRecordingProxy, type RecordingProxy } from '../../src/proxy/recording-proxy.js';
import {
  REPLAY_MISS_STATUS,
  replayKey,
  startReplayServer,
  type ReplayServer,
} from '../../src/testing/replay-server.js';
import { step } from '../../src/toy/steps.js';
import {
  postCompletion,
  scriptedServerBehindProxy,
  temporaryDirectory,
  type ProxyFixture,
} from '../support/fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const question = [
  { role: 'system', content: 'You are a careful analyst.' },
  { role: 'user', content: 'Audit data/prices.csv for leakage.' },
];
const tools = [{ type: 'function', function: { name: 'run_shell_command', parameters: { type: 'object' } } }];

/** A scripted model behind a recording proxy, torn down after the test. */
async function recorder(): Promise<ProxyFixture> {
  const fixture = await scriptedServerBehindProxy({ chunkSize: 7 });
  cleanups.push(() => fixture.close());
  return fixture;
}

async function replaying(recordings: string[]): Promise<ReplayServer> {
  const server = await startReplayServer({ recordings });
  cleanups.push(() => server.close());
  return server;
}

/** A recording proxy in front of the replay server: its rows reassemble what the replay answered. */
async function recordedReplay(
  server: ReplayServer,
): Promise<{ proxy: RecordingProxy; rows: () => Promise<ProxyLogRow[]> }> {
  const directory = temporaryDirectory();
  const logFile = join(directory.path, 'requests.jsonl');
  const proxy = await startRecordingProxy({
    upstream: server.url,
    listen: { host: '127.0.0.1', port: 0 },
    logFile,
  });
  cleanups.push(async () => {
    await proxy.close();
    directory.remove();
  });
  return { proxy, rows: () => readProxyLog(logFile) };
}

async function post(url: string, body: Record<string, unknown>): Promise<Response> {
  const response = await postCompletion(url, body);
  await response.arrayBuffer();
  return response;
}

describe('replay server: answers from recorded proxy logs', () => {
  it('answers a recorded request with the recorded message, streamed or not as the new request asks', async () => {
    const original = await recorder();
    original.server.enqueue(
      step.toolCall(
        'run_shell_command',
        { command: 'head data/prices.csv' },
        {
          content: 'Looking at the data first.',
          reasoning: 'Leakage hides in the columns.',
          id: 'call_7',
          usage: { promptTokens: 40, completionTokens: 12, reasoningTokens: 5 },
        },
      ),
    );
    expect((await post(original.proxy.url, { messages: question, tools, stream: true })).status).toBe(200);
    const [recorded] = await original.waitForRows(1);

    const replay = await replaying([original.logFile]);
    expect(replay.recorded).toBe(1);
    const { proxy, rows } = await recordedReplay(replay);
    // Sampling, seed and streaming do not take part in the match; key order does not either.
    const reordered = [{ content: question[0]!.content, role: 'system' }, question[1]!];
    expect((await post(proxy.url, { messages: reordered, tools, stream: true, seed: 3 })).status).toBe(200);
    expect(
      (await post(proxy.url, { messages: question, tools, stream: false, temperature: 0.2 })).status,
    ).toBe(200);

    const replayed = await rows();
    expect(replayed.map((row) => row.stream)).toEqual([true, false]);
    for (const row of replayed) {
      expect(row.response?.kind).toBe('completion');
      if (row.response?.kind !== 'completion' || recorded!.response?.kind !== 'completion') continue;
      expect(row.response.completion.message).toEqual(recorded!.response.completion.message);
      expect(row.response.completion.finish_reason).toBe('tool_calls');
      expect(row.response.completion.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12 });
    }
    expect(replay.misses).toEqual([]);
    replay.assertNoMisses();
  });

  it('refuses a request it has no recording for with a 422 naming it, and keeps serving', async () => {
    const original = await recorder();
    original.server.enqueue(step.text('The file has no leakage.'));
    await post(original.proxy.url, { messages: question });
    await original.waitForRows(1);

    const replay = await replaying([original.logFile]);
    const changed = [...question.slice(0, 1), { role: 'user', content: 'Audit data/volumes.csv instead.' }];
    const miss = await postCompletion(replay.url, { messages: changed });
    expect(miss.status).toBe(REPLAY_MISS_STATUS);
    const body = (await miss.json()) as { error: { message: string } };
    expect(body.error.message).toContain('request #0');
    expect(body.error.message).toContain('matches no recorded request');
    expect(body.error.message).toContain('data/volumes.csv');
    // A different tool list is a different request too.
    expect((await post(replay.url, { messages: question, tools })).status).toBe(REPLAY_MISS_STATUS);
    expect(replay.misses.map((each) => each.request.index)).toEqual([0, 1]);
    expect(() => replay.assertNoMisses()).toThrow(/2 request\(s\) missed; the first: .*request #0/);

    const hit = await postCompletion(replay.url, { messages: question });
    expect(hit.status).toBe(200);
    const answer = (await hit.json()) as { choices: { message: { content: string } }[] };
    expect(answer.choices[0]!.message.content).toBe('The file has no leakage.');
  });

  it('answers a request recorded several times in recorded order, then repeats the last answer', async () => {
    const original = await recorder();
    original.server.enqueue(step.text('first'), step.text('second'));
    await post(original.proxy.url, { messages: question, seed: 1 });
    await post(original.proxy.url, { messages: question, seed: 2 });
    await original.waitForRows(2);

    const replay = await replaying([original.logFile]);
    const contents: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await postCompletion(replay.url, { messages: question });
      const answer = (await response.json()) as { choices: { message: { content: string } }[] };
      contents.push(answer.choices[0]!.message.content);
    }
    expect(contents).toEqual(['first', 'second', 'second']);
  });

  it('does not replay failed calls: a request whose recording is an error is a miss', async () => {
    const original = await recorder();
    original.server.enqueue(step.status(400, { message: 'bad request' }));
    await post(original.proxy.url, { messages: question });
    original.server.enqueue(step.text('answered'));
    const other = [...question, { role: 'user', content: 'Again.' }];
    await post(original.proxy.url, { messages: other });
    await original.waitForRows(2);

    const replay = await replaying([original.logFile]);
    expect(replay.recorded).toBe(1);
    expect((await post(replay.url, { messages: question })).status).toBe(REPLAY_MISS_STATUS);
    expect((await post(replay.url, { messages: other })).status).toBe(200);
  });

  it("replays a real harness's recorded episode, every call answered as recorded (logs stored by schema 1)", async () => {
    for (const file of [
      'test/fixtures/qwen-code-0.24.4/requests.jsonl',
      'test/fixtures/distill/team-a/requests.jsonl',
    ]) {
      const recorded = (await readProxyLog(file)).filter((row) => row.response?.kind === 'completion');
      expect(recorded.length).toBeGreaterThan(3);
      const replay = await replaying([file]);
      const { proxy, rows } = await recordedReplay(replay);
      for (const row of recorded) {
        const body = row.request as Record<string, unknown>;
        const response = await fetch(`${proxy.url}${row.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        await response.arrayBuffer();
        expect(response.status, `${file} row ${row.seq}`).toBe(200);
      }
      const replayed = await rows();
      expect(
        replayed.map((row) => row.response?.kind === 'completion' && row.response.completion.message),
      ).toEqual(
        recorded.map((row) => row.response?.kind === 'completion' && row.response.completion.message),
      );
      expect(replay.misses).toEqual([]);
    }
  });

  it('names what is wrong when there is nothing to replay', async () => {
    await expect(startReplayServer({ recordings: [] })).rejects.toThrow(/no recordings given/);
    const directory = temporaryDirectory();
    cleanups.push(() => directory.remove());
    const empty = join(directory.path, 'requests.jsonl');
    writeFileSync(empty, '');
    await expect(startReplayServer({ recordings: [empty] })).rejects.toThrow(
      /requests\.jsonl hold no answered chat request to replay/,
    );
  });

  it('matches on model, messages, tools, tool choice and response format only', () => {
    const base = { model: 'm', messages: question, tools };
    expect(replayKey({ ...base, stream: true, seed: 4, temperature: 1, max_tokens: 9 })).toBe(
      replayKey(base),
    );
    expect(replayKey({ ...base, model: 'other' })).not.toBe(replayKey(base));
    expect(replayKey({ ...base, tool_choice: 'none' })).not.toBe(replayKey(base));
    expect(replayKey({ ...base, response_format: { type: 'json_object' } })).not.toBe(replayKey(base));
  });
});
