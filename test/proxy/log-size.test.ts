import { describe, expect, it } from 'vitest';

import type { ProxyLogRow } from '../../src/proxy/log-row.js';
import { chatRow } from '../support/chat-row.js';
import { encodeRows, logBytes } from './log-support.js';

const CALLS = 150;

/** Words drawn from a fixed generator: text that does not repeat (a real conversation's new content). */
function textOf(seed: number, characters: number): string {
  const words: string[] = [];
  let state = seed * 2654435761 + 1;
  let length = 0;
  while (length < characters) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const word = state.toString(36);
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, characters);
}

/**
 * One thread of `CALLS` calls as qwen-code makes them: each call answers with reasoning, a sentence and a tool call
 * (about 150 tokens, which the next request sends back whole), and the tool's result adds about 450 tokens: some 600
 * tokens (2,400 characters) of new content per call. The system prompt and the tool list open every request.
 */
function threadRows(): ProxyLogRow[] {
  const tools = Array.from({ length: 12 }, (_, index) => ({
    type: 'function',
    function: {
      name: `tool_${index}`,
      description: textOf(1000 + index, 1500),
      parameters: { type: 'object' },
    },
  }));
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: textOf(1, 12_000) },
    { role: 'user', content: textOf(2, 2_000) },
  ];
  const rows: ProxyLogRow[] = [];
  for (let seq = 0; seq < CALLS; seq++) {
    const reply = {
      role: 'assistant',
      content: textOf(10 * seq + 3, 100),
      reasoning_content: textOf(10 * seq + 4, 300),
      tool_calls: [
        {
          id: `call_${seq}`,
          type: 'function',
          function: {
            name: 'run_shell_command',
            arguments: JSON.stringify({ command: textOf(10 * seq + 5, 170) }),
          },
        },
      ],
    };
    const usage = { prompt_tokens: 5000 + 600 * seq, completion_tokens: 150 };
    const request = { model: 'm', messages: [...messages], stream: true, tools };
    rows.push({
      ...chatRow(
        seq,
        [],
        reply,
        {
          startedAt: '2026-12-01T10:00:00.000Z',
          endedAt: '2026-12-01T10:00:04.321Z',
          durationMs: 4321.123,
          attempts: [{ status: 200, error: null, startedAfterMs: 0.5, durationMs: 4320.9, delayMs: null }],
          refusal: null,
        },
        usage,
      ),
      request,
    });
    messages.push(reply, { role: 'tool', tool_call_id: `call_${seq}`, content: textOf(10 * seq + 6, 1_800) });
  }
  return rows;
}

// Measured: distinct content 422,027 bytes; stored 559,318 (1.33×); whole bodies, as before, 34,288,933 (81.2×).
describe('proxy log: size', () => {
  it(`stores a ${CALLS}-call thread in at most 1.5 times its distinct content`, () => {
    const rows = threadRows();
    const last = rows.at(-1)!;
    // Each thing once: the last request (every message and the tool list), and the last answer, which no request
    // holds. Every other answer is a message of the next request.
    const lastAnswer = last.response?.kind === 'completion' ? last.response.completion.message : null;
    const distinct =
      Buffer.byteLength(JSON.stringify(last.request)) + Buffer.byteLength(JSON.stringify(lastAnswer));
    const stored = logBytes(encodeRows(rows));
    const whole = logBytes(rows.map((row) => JSON.stringify(row)));
    console.log(
      `${CALLS} calls: distinct content ${distinct} bytes; stored ${stored} (${(stored / distinct).toFixed(2)}×); ` +
        `whole bodies ${whole} (${(whole / distinct).toFixed(1)}×)`,
    );
    expect(stored / distinct).toBeLessThanOrEqual(1.5);
  });
});
