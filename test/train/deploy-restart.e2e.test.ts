import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { deployGeneration, type DeployMethod } from '../../src/train/deploy.js';
import type { ModelGeneration } from '../../src/records/model-generation.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { startFakeVllm, type FakeVllm } from './fake-vllm.js';
import { baseGeneration, rejection } from './support.js';

const KEY_VARIABLE = 'MASS_TEST_RESTART_KEY';
const KEY = 'sk-restart-secret-4567';

const l1: ModelGeneration = baseGeneration({
  name: 'L1',
  parent: 'L0',
  mergedPath: '/runs/r/train/L1/merged',
  datasetId: 'distill/L0/dataset',
  servedAs: 'mass-L1',
});

/** A restart command: tells the fake server to come back on the merged model, and prints the key it was given. */
const restartScript = [
  'const [modelPath, servedAs, url] = process.argv.slice(1);',
  `console.log('restarting with key ' + process.env.${KEY_VARIABLE});`,
  "await fetch(url + '/_test/restart', { method: 'POST', headers: { authorization: 'Bearer ' + process.env." +
    `${KEY_VARIABLE} }, body: JSON.stringify({ model_path: modelPath, served_as: servedAs }) });`,
].join('\n');

const directory = temporaryDirectory('mass-deploy-restart-');
let server: FakeVllm;

beforeAll(() => {
  process.env[KEY_VARIABLE] = KEY;
});
afterEach(() => server.close());
afterAll(() => {
  delete process.env[KEY_VARIABLE];
  directory.remove();
});

function deploy(method: Partial<Extract<DeployMethod, { kind: 'restart' }>>, generation = l1) {
  return deployGeneration({
    server: { baseUrl: server.baseUrl, apiKeyEnv: KEY_VARIABLE },
    generation,
    method: {
      kind: 'restart',
      argv: [
        process.execPath,
        '--input-type=module',
        '-e',
        restartScript,
        '{model_path}',
        '{served_as}',
        server.url,
      ],
      logFile: join(directory.path, 'restart.log'),
      pollIntervalMs: 50,
      timeoutMs: 5_000,
      ...method,
    },
  });
}

describe('deploying merged weights with a restart command', () => {
  it('runs the command, waits out the restart, and checks the model answers', async () => {
    server = await startFakeVllm({ models: ['qwen3'], apiKey: KEY, startingRequests: 2 });
    const logFile = join(directory.path, 'ok.log');
    await expect(deploy({ logFile })).resolves.toEqual({
      servedAs: 'mass-L1',
      method: 'restart',
      alreadyServed: false,
    });

    const restart = server.requests.find((request) => request.path === '/_test/restart');
    expect(restart?.body).toEqual({ model_path: '/runs/r/train/L1/merged', served_as: 'mass-L1' });
    const polls = server.requests.filter((request) => request.path === '/v1/models');
    // Two polls while the server starts (503), the one that found the model, and the final check.
    expect(polls.length).toBe(4);
    expect(server.requests.at(-1)).toMatchObject({
      path: '/v1/chat/completions',
      body: { model: 'mass-L1' },
    });

    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('restarting with key ***');
    expect(log).not.toContain(KEY);
  });

  it('gives up after the bounded wait with an error naming the server, the model and the log', async () => {
    server = await startFakeVllm({ models: ['qwen3'] });
    const logFile = join(directory.path, 'timeout.log');
    const error = await rejection(deploy({ argv: [process.execPath, '-e', ''], logFile, timeoutMs: 300 }));
    expect(error).toBeInstanceOf(SystemError);
    expect(error.message).toMatch(
      new RegExp(
        `${server.url} did not serve mass-L1 within 0.3 s of the restart \\(last: it serves qwen3\\)`,
      ),
    );
    expect(error.message).toContain(`see the restart log ${logFile}`);
  });

  it('reports a failed command with its log, and refuses what cannot be restarted into', async () => {
    server = await startFakeVllm({ models: ['qwen3'] });
    const logFile = join(directory.path, 'failed.log');
    const failed = deploy({
      argv: [process.execPath, '-e', 'console.error("unit vllm-mass not found"); process.exit(5)'],
      logFile,
    });
    await expect(failed).rejects.toThrow(SystemError);
    await expect(failed).rejects.toThrow(
      new RegExp(`exited with 5; its log is ${logFile}, ending:\\n[^]*unit vllm-mass not found`),
    );
    await expect(deploy({}, { ...l1, mergedPath: undefined, adapterPath: '/a' })).rejects.toThrow(
      /generation L1 has only an adapter: deploy it with runtime LoRA loading/,
    );
    await expect(deploy({ argv: ['systemctl', 'restart', '{unit}'] })).rejects.toThrow(UserError);
  });
});
