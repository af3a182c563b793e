import { afterEach, describe, expect, it } from 'vitest';

import { AnthropicModel, anthropicTurns } from '../../src/model/anthropic.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';

let server: ScriptedServer;
afterEach(() => server.close());

describe('Anthropic client', () => {
  it('translates a conversation with tool calls, and the answer back to chat-completions form', async () => {
    server = await startScriptedServer({
      strict: 'anthropic',
      script: [
        step.status(529),
        step.text('B is better: it has the ablation.', {
          reasoning: 'compare the two',
          usage: { promptTokens: 40, completionTokens: 9 },
        }),
      ],
    });
    const model = new AnthropicModel({
      apiKey: 'sk-ant-test',
      baseUrl: server.url,
      retry: { initialDelayMs: 1, maxDelayMs: 2 },
    });
    const response = await model.complete({
      model: 'claude-judge',
      messages: [
        { role: 'system', content: 'You are a strict judge.' },
        { role: 'user', content: 'Compare A and B.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 't1', type: 'function', function: { name: 'read', arguments: '{"path":"a.md"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: 'report A' },
      ],
      sampling: { maxTokens: 300 },
    });
    expect(response).toMatchObject({
      model: 'claude-judge',
      message: {
        role: 'assistant',
        content: 'B is better: it has the ablation.',
        reasoning_content: 'compare the two',
      },
      finishReason: 'stop',
      usage: { promptTokens: 40, completionTokens: 9, totalTokens: 49 },
    });
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(`${sent.headers['x-api-key'] ?? ''} ${sent.headers.authorization ?? ''}`).toContain('sk-ant-test');
    expect(sent.body).toMatchObject({
      system: 'You are a strict judge.',
      max_tokens: 300,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Compare A and B.' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a.md' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'report A' }] },
      ],
    });
    expect(server.requests).toHaveLength(2);
  });
});

describe('anthropicTurns', () => {
  it('merges a tool result and the next user message into one user turn', () => {
    const turns = anthropicTurns([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: 'not json' } }],
      },
      { role: 'tool', tool_call_id: 'x', content: 'out' },
      { role: 'user', content: 'next' },
    ]);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user']);
    expect(turns[1]!.content[1]).toMatchObject({
      type: 'tool_use',
      input: { _unparsed_arguments: 'not json' },
    });
    expect(turns[2]!.content).toHaveLength(2);
  });
});
