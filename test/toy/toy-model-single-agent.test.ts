import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { episodePrompt } from '../../src/episode/prompt.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import type { ScriptedRequest } from '../../src/testing/scripted-server.js';
import { BASE_TOY_WEIGHTS, toyResponder } from '../../src/toy/index.js';

const fixture = fileURLToPath(new URL('../fixtures/qwen-code-0.24.4/requests.jsonl', import.meta.url));
const potencyDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));

interface RequestBody {
  messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  tools: Array<{ function: { name: string } }>;
}

/** qwen-code's first orchestrator request (recorded), carrying the bare demo task as its prompt. */
async function orchestratorRequest(): Promise<RequestBody> {
  const first = JSON.parse(readFileSync(fixture, 'utf8').split('\n')[0]!) as { request: RequestBody };
  const body = structuredClone(first.request);
  const user = body.messages[1]!;
  const parts = user.content as Array<{ type: string; text?: string }>;
  parts[parts.length - 1] = {
    type: 'text',
    text: episodePrompt({ task: renderTaskPrompt(await loadTask(potencyDir)) }),
  };
  return body;
}

describe('the toy orchestrator without the agent tool (the single-agent condition)', () => {
  it('delegates when the harness offers the agent tool, and works alone when it does not', async () => {
    const respond = toyResponder({ weights: { ...BASE_TOY_WEIGHTS, delegateBare: 1 } });
    const body = await orchestratorRequest();
    const firstTool = (requestBody: RequestBody) => {
      const reply = respond({ body: requestBody } as ScriptedRequest);
      if (reply instanceof Promise || reply.kind !== 'reply') throw new Error('the toy did not reply');
      return reply.reply.toolCalls?.[0]?.name;
    };
    expect(body.tools.map((tool) => tool.function.name)).toContain('agent');
    expect(firstTool(body)).toBe('agent');
    const withoutAgent = { ...body, tools: body.tools.filter((tool) => tool.function.name !== 'agent') };
    expect(firstTool(withoutAgent)).not.toBe('agent');
  });
});
