import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { readFileSync } from 'node:fs';

import { readProxyLog, type ProxyLogRow } from '../../src/proxy/log-row.js';
import { step } from '../../src/toy/steps.js';
import { chatRow } from '../support/chat-row.js';
import { postCompletion, scriptedServerBehindProxy, temporaryDirectory } from '../support/fixtures.js';
import { encodeRows, RECORDED_LOGS, wholeRows, writeLog } from './log-support.js';

type Message = Record<string, unknown>;

const toolList = (names: string[]) =>
  names.map((name) => ({
    type: 'function',
    function: {
      name,
      description: `The ${name} tool. `.repeat(20),
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  }));
const TOOLS = toolList(['read_file', 'write_file', 'run_shell_command', 'agent']);
const FEWER_TOOLS = toolList(['read_file', 'run_shell_command']);

const orchestratorSystem: Message = { role: 'system', content: 'You are the orchestrator. '.repeat(40) };
const subagentSystem: Message = { role: 'system', content: 'You are a subagent. '.repeat(40) };
const task: Message = { role: 'user', content: 'Fit the model to data/prices.csv and write report.md.' };
const parallelCalls: Message = {
  role: 'assistant',
  content: 'Two things at once.',
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.csv"}' } },
    {
      id: 'call_2',
      type: 'function',
      function: { name: 'agent', arguments: '{"prompt":"Audit the data."}' },
    },
  ],
};
const results: Message[] = [
  { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'date,price\n2020-01-01,3.2\n' }] },
  {
    role: 'tool',
    tool_call_id: 'call_2',
    content: [{ type: 'text', text: 'The data has a leak in column x.' }],
  },
];
const audit: Message = { role: 'user', content: 'Audit the data.' };
const auditStep: Message[] = [
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
  },
  { role: 'tool', tool_call_id: 'c', content: 'date,price' },
];
const summary: Message = {
  role: 'user',
  content: '<state_snapshot>Data read; a leak found in x.</state_snapshot>',
};

/** A request body as qwen-code sends one, keys in its order. */
const body = (messages: Message[], tools: unknown[] | null = TOOLS) => ({
  model: 'm',
  messages,
  temperature: 0.7,
  seed: 7,
  stream: true,
  stream_options: { include_usage: true },
  ...(tools === null ? {} : { tools }),
});

/**
 * One log of two interleaved threads (an orchestrator and its subagent) with every edit that breaks a prefix: a
 * compacted history, a rewritten system prompt, a changed tool list, and rows that are not chat requests at all.
 */
function conversationRows(): ProxyLogRow[] {
  const requests: Array<{ request: unknown; extra?: Partial<ProxyLogRow> }> = [
    { request: body([orchestratorSystem, task]) },
    { request: body([subagentSystem, audit]) },
    { request: body([orchestratorSystem, task, parallelCalls, ...results]) },
    { request: body([subagentSystem, audit, ...auditStep]) },
    // The same request again (a client's retry): everything shared, nothing added.
    { request: body([subagentSystem, audit, ...auditStep]) },
    // Compacted: the history replaced by a summary; only the system prompt is shared.
    { request: body([orchestratorSystem, summary]) },
    // A rewritten system prompt: nothing shared.
    { request: body([{ role: 'system', content: 'You are the orchestrator, now terse.' }, summary]) },
    // The tool list changes mid-episode, then comes back.
    { request: body([orchestratorSystem, summary, parallelCalls], FEWER_TOOLS) },
    { request: body([orchestratorSystem, summary, parallelCalls, ...results]) },
    // No tools at all (a helper's call), and keys in another order, `tools` first.
    { request: body([orchestratorSystem, task], null) },
    { request: { tools: FEWER_TOOLS, stream: false, messages: [orchestratorSystem, task], model: 'm' } },
    // Keys JavaScript orders apart (integer-like) or treats apart (`__proto__`), kept as JSON.parse gives them.
    {
      request: JSON.parse(
        '{"model":"m","2":"two","messages":[{"role":"user","content":"x"}],"__proto__":{"a":1}}',
      ),
    },
    // Not chat requests: JSON without messages, a body that is not JSON, no body, a refused chat request.
    { request: { model: 'm', input: 'embed me' } },
    { request: 'not json {', extra: { requestIsJson: false, status: 400, refusal: 'malformed' } },
    { request: null, extra: { method: 'GET', path: '/v1/models', requestIsJson: false } },
    { request: body([orchestratorSystem, task]), extra: { status: 400, refusal: 'output_budget' } },
  ];
  return requests.map(({ request, extra }, seq) => ({
    ...chatRow(seq, [], { content: `answer ${seq}` }, extra),
    request,
  }));
}

describe('proxy log: each thing stored once, every request rebuilt exactly', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it.each(RECORDED_LOGS)('rebuilds every request of %s exactly', async (fixture) => {
    const rows = wholeRows(fixture);
    const read = await readProxyLog(writeLog(directory.path, encodeRows(rows)));
    expect(read).toHaveLength(rows.length);
    for (const [index, row] of rows.entries()) {
      expect(JSON.stringify(read[index]!.request)).toBe(JSON.stringify(row.request));
    }
  });

  it('rebuilds bodies an agent shaped to confuse it: odd messages and tools, a body of its own named `chat`', async () => {
    // The agent writes the request body: whatever it sends must come back as sent, and never break the reader.
    const bodies: unknown[] = [
      { messages: [], tools: 'x' },
      { messages: [null, 1, 'a', [], { role: 'user', content: 'k' }], tools: {} },
      {
        tools: [{ a: 1 }],
        messages: [
          { role: 'user', content: 'k' },
          { role: 'assistant', content: null },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'k' },
          { ['__proto__']: { x: 1 }, constructor: 2 },
        ],
        tools: [{ a: 1 }],
      },
      { messages: { not: 'an array' } },
      { messages: [{ role: 'user', content: 'k' }], tools: null },
      { messages: [{ role: 'user', content: 'k' }, { x: 1 }], chat: { base: { seq: 0, shared: 5 } } },
      [1, 2, 3],
      'text',
    ];
    const rows = bodies.map((body, seq) => ({ ...chatRow(seq, []), request: body }));
    const read = await readProxyLog(writeLog(directory.path, encodeRows(rows)));
    expect(read.map((row) => JSON.stringify(row.request))).toEqual(
      bodies.map((body) => JSON.stringify(body)),
    );
  });

  it('rebuilds conversations whose prefixes break: compaction, a new system prompt, interleaved threads, tool lists', async () => {
    const rows = conversationRows();
    const lines = encodeRows(rows);
    const read = await readProxyLog(writeLog(directory.path, lines));
    expect(read.map((row) => JSON.stringify(row.request))).toEqual(
      rows.map((row) => JSON.stringify(row.request)),
    );
    expect(read.map((row) => row.schemaVersion)).toEqual(rows.map(() => 1));

    const stored = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const chat = stored.map(
      (row) => row.chat as { base?: unknown; added: unknown[]; tools?: { list?: unknown } },
    );
    expect(chat[2]).toMatchObject({ base: { seq: 0, shared: 2 }, added: [parallelCalls, ...results] });
    expect(chat[3]).toMatchObject({ base: { seq: 1, shared: 2 }, added: auditStep });
    expect(chat[4]).toMatchObject({ base: { seq: 3, shared: 4 }, added: [] });
    expect(chat[5]).toMatchObject({ base: { seq: 2, shared: 1 }, added: [summary] });
    expect(chat[6]!.base).toBeUndefined();
    expect(chat[7]).toMatchObject({ base: { seq: 5, shared: 2 }, added: [parallelCalls] });
    expect(chat[9]!.tools).toBeUndefined();
    // The tool list is stored by the first row using it, and again only when it changed.
    expect(chat.map((delta) => delta?.tools?.list !== undefined)).toEqual([
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    // Bodies stored as they are: not chat requests, and refused ones.
    for (const seq of [12, 13, 14, 15]) {
      expect(stored[seq]!.chat).toBeUndefined();
      expect(stored[seq]!.request).toEqual(rows[seq]!.request);
    }
  });

  it('keeps secrets out of what it stores, and rebuilds the redacted request', async () => {
    const secret = 'sk-secret-0123456789';
    const rows = [
      { ...chatRow(0, []), request: body([orchestratorSystem, { role: 'user', content: `key ${secret}` }]) },
      {
        ...chatRow(1, []),
        request: body([orchestratorSystem, { role: 'user', content: `key ${secret}` }, parallelCalls]),
      },
    ];
    const file = writeLog(directory.path, encodeRows(rows, [secret]));
    const read = await readProxyLog(file);
    expect(JSON.stringify(read)).not.toContain(secret);
    expect(read[1]!.request).toMatchObject({ messages: [{}, { content: 'key [REDACTED]' }, parallelCalls] });
  });

  it('reads logs of whole bodies, and logs that hold both kinds of row', async () => {
    const rows = conversationRows();
    const whole = rows.slice(0, 3).map((row) => JSON.stringify(row));
    const read = await readProxyLog(writeLog(directory.path, [...whole, ...encodeRows(rows)]));
    expect(read.map((row) => JSON.stringify(row.request))).toEqual(
      [...rows.slice(0, 3), ...rows].map((row) => JSON.stringify(row.request)),
    );
  });

  it('reads a log cut mid-row (a proxy killed) up to its last whole row', async () => {
    const lines = encodeRows(conversationRows());
    const last = lines.pop()!;
    const file = writeLog(directory.path, [...lines, last.slice(0, last.length / 2)], '');
    expect(await readProxyLog(file)).toHaveLength(lines.length);
  });

  it('refuses, naming the file and line, a row whose earlier row is missing', async () => {
    const lines = encodeRows(conversationRows());
    const withoutSecond = writeLog(directory.path, [lines[0]!, ...lines.slice(2)]);
    // Row 3 (now line 3) opens with row 1's messages.
    await expect(readProxyLog(withoutSecond)).rejects.toThrow(
      `${withoutSecond}: line 3 opens with the messages of row 1 of writer`,
    );
    const withoutToolList = writeLog(directory.path, [lines[1]!.replace(/,"list":\[.*\]\}\}$/, '}}')]);
    await expect(readProxyLog(withoutToolList)).rejects.toThrow(
      `${withoutToolList}: line 1 names the tool list`,
    );
  });
});

describe('recording proxy: the log it writes', () => {
  it('stores a growing conversation once, its answers by reference, and rebuilds each request as sent', async () => {
    const fixture = await scriptedServerBehindProxy();
    try {
      const key = 'sk-client-KEY-0123456789';
      const headers = { authorization: `Bearer ${key}` };
      fixture.server.enqueue(step.toolCall('read_file', { path: 'a.csv' }, { content: 'Reading.' }));
      fixture.server.enqueue(step.text('Done.'));
      const opening = [orchestratorSystem, { role: 'user', content: `My key is ${key}.` }];
      const first = body(opening);
      await (await postCompletion(fixture.proxy.url, first, { headers })).text();
      const [row] = await fixture.waitForRows(1);
      const answer = row!.response?.kind === 'completion' ? row!.response.completion.message : null;
      // The harness's order of an assistant message's keys, which is not the log's.
      const { role, content, tool_calls: calls } = answer as Message;
      const turn = { role, content, tool_calls: calls };
      const result = { role: 'tool', tool_call_id: 'x', content: [{ type: 'text', text: 'date,price' }] };
      const second = body([...opening, turn, result]);
      await (await postCompletion(fixture.proxy.url, second, { headers })).text();
      const rows = await fixture.waitForRows(2);

      const stored = readFileSync(fixture.logFile, 'utf8').trim().split('\n');
      expect(stored.join('\n')).not.toContain(key);
      expect(JSON.parse(stored[1]!)).toMatchObject({
        schemaVersion: 2,
        chat: { base: { seq: 0, shared: 2 }, added: [null, result], answers: [{ at: 0, seq: 0 }] },
      });
      const redacted = (sent: unknown) =>
        JSON.parse(JSON.stringify(sent).replaceAll(key, '[REDACTED]')) as unknown;
      expect(JSON.stringify(rows[1]!.request)).toBe(JSON.stringify(redacted(second)));
      expect(JSON.stringify(rows[0]!.request)).toBe(JSON.stringify(redacted(first)));
    } finally {
      await fixture.close();
    }
  });
});
