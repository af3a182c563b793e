import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const directory = temporaryDirectory();
let server: ScriptedServer | undefined;
afterAll(async () => {
  await server?.close();
  directory.remove();
});

describe('mass episode', () => {
  it('runs an episode with the task’s initial workflow and prints its record', async () => {
    server = await startScriptedServer({
      responder: () => step.text('Nothing to do.'),
      models: ['qwen3-toy'],
      // vLLM's fields only, and a served context shorter than the harness's default.
      strict: 'openai-compatible',
      maxModelLength: 131_072,
    });
    const out = join(directory.path, 'e1');
    const args = ['episode', '--task', taskDir, '--workflow', 'initial', '--teacher', '--model', 'qwen3-toy'];
    const result = await runMass([
      ...args,
      '--base-url',
      server.baseUrl,
      '--seed',
      '5',
      '--data-seed',
      '9',
      '--out',
      out,
      '--timeout',
      '2m',
      '--json',
    ]);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as {
      status: string;
      seed: number;
      dataSeed: number;
      teacher: boolean;
      workflowHash: string | null;
    };
    expect(record).toMatchObject({ status: 'success', seed: 5, dataSeed: 9, teacher: true });
    // The model samples with the sampling seed; the data seed is the workspace's alone.
    // The first request reads the served context (GET /v1/models); the rest are the model's calls.
    const calls = server.requests.filter((request) => request.method === 'POST');
    expect(server.requests[0]!.path).toBe('/v1/models');
    expect(calls.every((request) => (request.body as { seed?: number }).seed === 5)).toBe(true);
    expect(record.workflowHash).not.toBeNull();
    const prompt = (calls[0]!.body as { messages: Array<{ content: unknown }> }).messages[1]!.content;
    expect(JSON.stringify(prompt)).toContain('## Team workflow');
    expect(server.rejected).toHaveLength(0);
    // Compaction at 85 % of the harness's context leaves one call's 32,768 output tokens within the served 131,072.
    const settings = JSON.parse(readFileSync(join(out, 'home', 'settings.json'), 'utf8')) as {
      modelProviders: { openai: Array<{ generationConfig: { contextWindowSize: number } }> };
    };
    expect(settings.modelProviders.openai[0]!.generationConfig.contextWindowSize).toBe(115_651);
  }, 60_000);

  it('runs the task single-agent: no agent tool offered, no team design, and refuses a workflow with it', async () => {
    const single = await startScriptedServer({
      responder: () => step.text('Nothing to do.'),
      models: ['qwen3-toy'],
    });
    try {
      const common = ['episode', '--task', taskDir, '--model', 'qwen3-toy', '--base-url', single.baseUrl];
      const result = await runMass([
        ...common,
        '--single-agent',
        '--seed',
        '3',
        '--out',
        join(directory.path, 'single'),
        '--timeout',
        '2m',
        '--json',
      ]);
      expect(result.stderr).not.toContain('Error');
      expect(result.code).toBe(0);
      const record = JSON.parse(result.stdout) as {
        status: string;
        workflowHash: string | null;
        delegations: number;
      };
      expect(record).toMatchObject({ status: 'success', workflowHash: null, delegations: 0 });
      const calls = single.requests.filter((request) => request.method === 'POST');
      expect(calls.length).toBeGreaterThan(0);
      const toolNames = (body: unknown) =>
        ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map(
          (tool) => tool.function.name,
        );
      expect(toolNames(calls[0]!.body).length).toBeGreaterThan(0);
      for (const call of calls) expect(toolNames(call.body)).not.toContain('agent');

      const refused = await runMass([
        ...common,
        '--single-agent',
        '--workflow',
        'initial',
        '--seed',
        '3',
        '--out',
        join(directory.path, 'single-with-workflow'),
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--single-agent runs the bare task');
    } finally {
      await single.close();
    }
  }, 60_000);

  it('names the flag and what to do for bad input', async () => {
    const bad = await runMass([
      'episode',
      '--task',
      taskDir,
      '--model',
      'm',
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--seed',
      '1',
      '--out',
      join(directory.path, 'x'),
      '--timeout',
      'soon',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--timeout "soon" is not a duration');
    const missing = await runMass([
      'episode',
      '--task',
      join(directory.path, 'no-such-task'),
      '--model',
      'm',
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--seed',
      '1',
      '--out',
      join(directory.path, 'y'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no-such-task');
  }, 60_000);
});
