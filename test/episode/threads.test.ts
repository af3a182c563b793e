import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { buildThreads } from '../../src/records/threads.js';
import type { ChatMessage } from '../../src/model/types.js';
import { readProxyLog } from '../support/fixtures.js';
import { chatRow } from '../support/chat-row.js';

const fixture = fileURLToPath(new URL('../fixtures/qwen-code-0.24.4/requests.jsonl', import.meta.url));

describe('threads from a real qwen-code log (orchestrator delegating to two subagents)', () => {
  const rows = readProxyLog(fixture);
  const threads = buildThreads(rows);

  it('finds one orchestrator and two subagent threads, each one segment', () => {
    expect(threads.map((thread) => [thread.role, thread.calls, thread.segments.length])).toEqual([
      ['orchestrator', 3, 1],
      ['subagent', 3, 1],
      ['subagent', 3, 1],
    ]);
    expect(threads.reduce((sum, thread) => sum + thread.calls, 0)).toBe(rows.length);
  });

  it('ends each segment with the final response and takes every assistant turn from the recorded response', () => {
    const [orchestrator] = threads;
    const segment = orchestrator!.segments[0]!;
    const assistantTurns = segment.messages.filter((message) => message.role === 'assistant');
    expect(assistantTurns).toHaveLength(3);
    expect(segment.messages.at(-1)).toMatchObject({
      content: 'Both stages are done: data.csv and summary.txt.',
    });
    // qwen-code echoes the first turn without its content's original formatting; the recorded one is kept.
    const first = assistantTurns[0]!;
    expect(first).toMatchObject({
      content: 'I will delegate data generation first.',
      reasoning_content: 'Stage 1 needs the data; delegate it in the foreground.',
    });
    const bySeq = new Map(rows.map((row) => [row.seq, row]));
    for (const response of segment.responses) {
      const row = bySeq.get(response.seq)!;
      expect(row.response?.kind === 'completion' && row.response.completion.message).toEqual(
        segment.messages[response.messageIndex],
      );
    }
    expect(orchestrator!.segments[0]!.tools.map((tool) => tool.function.name)).toContain('agent');
  });

  it('keeps tool calls and tool results faithfully, content arrays included', () => {
    const subagent = threads[1]!.segments[0]!;
    const calls = subagent.messages.flatMap((message) =>
      message.role === 'assistant' ? (message.tool_calls ?? []) : [],
    );
    expect(calls.map((call) => call.function.name)).toEqual(['write_file', 'run_shell_command']);
    const results = subagent.messages.filter((message) => message.role === 'tool');
    expect(results).toHaveLength(2);
    expect(Array.isArray(results[0]!.content)).toBe(true);
    expect(JSON.stringify(results[1]!.content)).toContain('python3 data.py');
  });

  it('adds up usage per thread to the log’s totals', () => {
    const total = rows.reduce(
      (sum, row) =>
        sum +
        (row.response?.kind === 'completion' ? (row.response.completion.usage?.completion_tokens ?? 0) : 0),
      0,
    );
    expect(threads.reduce((sum, thread) => sum + thread.usage.completionTokens, 0)).toBe(total);
    expect(total).toBeGreaterThan(0);
  });
});

describe('segments and echoes', () => {
  const system: ChatMessage = { role: 'system', content: 'You are Qwen Code, an agent.' };
  const user: ChatMessage = { role: 'user', content: 'Do the task.' };
  const call = {
    id: 'c1',
    type: 'function' as const,
    function: { name: 'run_shell_command', arguments: '{"command": "ls"}' },
  };

  it('continues a segment through a re-serialised echo, and starts a new one when the history is rewritten', () => {
    const threads = buildThreads([
      chatRow(0, [system, user], { tool_calls: [call], reasoning_content: 'look first' }),
      // The harness echoes the call with compact arguments and "" for the null content.
      chatRow(
        1,
        [
          system,
          user,
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ ...call, function: { ...call.function, arguments: '{"command":"ls"}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
        ],
        {
          content: 'Found a.txt.',
        },
      ),
      // A compressed history: no longer a continuation.
      chatRow(2, [system, user, { role: 'user', content: 'Summary of earlier work: found a.txt.' }], {
        content: 'Continuing.',
      }),
      chatRow(3, [system, user], { content: 'ignored' }, { status: 500, response: null, error: null }),
    ]);
    expect(threads).toHaveLength(1);
    const [thread] = threads;
    expect(thread!.calls).toBe(3);
    expect(thread!.segments.map((segment) => segment.responses.map((response) => response.seq))).toEqual([
      [0, 1],
      [2],
    ]);
    expect(thread!.segments[0]!.messages[2]).toMatchObject({
      content: null,
      reasoning_content: 'look first',
      tool_calls: [call],
    });
  });

  it('marks responses cut by the length limit', () => {
    const threads = buildThreads(
      [chatRow(0, [system, user], { content: 'partial' }, {})].map((value) => {
        if (value.response?.kind === 'completion') value.response.completion.finish_reason = 'length';
        return value;
      }),
    );
    expect(threads[0]!.segments[0]!.responses[0]).toMatchObject({ truncated: true, finishReason: 'length' });
  });

  it('classifies the harness’s own helper threads as auxiliary', () => {
    const threads = buildThreads([
      chatRow(
        0,
        [
          {
            role: 'system',
            content:
              'You are now acting as the managed memory extraction subagent for an AI coding assistant.',
          },
          user,
        ],
        { content: 'ok' },
      ),
    ]);
    expect(threads[0]!.role).toBe('auxiliary');
  });
});
