import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { runMass, startMass, waitForStderr } from '../support/cli.js';
import { postCompletion, readProxyLog, temporaryDirectory, unusedPort } from '../support/fixtures.js';

let server: ScriptedServer;
afterEach(() => server.close());

describe('mass proxy', () => {
  it('records requests until stopped, then prints the token totals', async () => {
    server = await startScriptedServer({
      script: [step.text('recorded', { usage: { promptTokens: 5, completionTokens: 2 } })],
    });
    const directory = temporaryDirectory();
    const log = join(directory.path, 'requests.jsonl');
    const port = await unusedPort();
    const { child, finished } = startMass([
      'proxy',
      '--upstream',
      server.url,
      '--listen',
      `127.0.0.1:${port}`,
      '--log',
      log,
    ]);
    await waitForStderr(child, /listening on/);
    const response = await postCompletion(`http://127.0.0.1:${port}`, { stream: true });
    await response.text();
    child.kill('SIGTERM');
    const result = await finished;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      '"scripted-model":{"requests":1,"failedRequests":0,"promptTokens":5,"completionTokens":2',
    );
    const rows = readProxyLog(log);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.response).toMatchObject({ completion: { message: { content: 'recorded' } } });
    directory.remove();
  });

  it('refuses a bad --listen with a clear message and exit code 2', async () => {
    server = await startScriptedServer();
    const result = await runMass([
      'proxy',
      '--upstream',
      server.url,
      '--listen',
      'localhost',
      '--log',
      '/tmp/x.jsonl',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--listen "localhost" is neither host:port');
  });
});

describe('mass models', () => {
  it('lists the served models and checks that one answers', async () => {
    server = await startScriptedServer({
      models: ['qwen3-8b'],
      maxModelLength: 131_072,
      script: [step.text('ready')],
    });
    const result = await runMass(['models', '--base-url', server.baseUrl, '--check', 'qwen3-8b', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      models: ['qwen3-8b'],
      contextLengths: { 'qwen3-8b': 131_072 },
      check: { model: 'qwen3-8b', reply: 'ready' },
    });
  });

  it('says clearly when nothing listens at the base URL', async () => {
    server = await startScriptedServer();
    const port = await unusedPort();
    const result = await runMass(['models', '--base-url', `http://127.0.0.1:${port}/v1`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^mass: cannot connect to .*ECONNREFUSED.*is the model server running/);
  });
});
