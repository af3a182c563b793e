import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { deployToReplicas } from '../../src/hosting/replica-serving.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { startFakeVllm } from '../train/fake-vllm.js';
import { trainedRun } from './trained-run.js';

const directory = temporaryDirectory('mass-replica-restart-');
afterAll(() => directory.remove());

/** A restart command: tells each fake server it names to come back on the merged model. */
const RESTART_SCRIPT = [
  'const [modelPath, servedAs, ...roots] = process.argv.slice(1);',
  "console.log('restarting ' + roots.join(' '));",
  'for (const root of roots) {',
  "  await fetch(root.replace(/\\/v1$/, '') + '/_test/restart', {",
  "    method: 'POST',",
  '    body: JSON.stringify({ model_path: modelPath, served_as: servedAs }),',
  '  });',
  '}',
].join('\n');

describe('replicas: a restart command reaches every replica', () => {
  it('runs a command that names {base_url} once per replica, and one that does not once, waiting for each', async () => {
    const replicas = [await startFakeVllm({ models: ['qwen3'] }), await startFakeVllm({ models: ['qwen3'] })];
    const servers = replicas.map((replica) => ({ baseUrl: replica.baseUrl }));
    const generation = {
      ...(await trainedRun(join(directory.path, 'restart'))).l1,
      mergedPath: '/merged/L1',
    };
    const logFile = join(directory.path, 'restart.log');
    const command = [
      process.execPath,
      '--input-type=module',
      '-e',
      RESTART_SCRIPT,
      '{model_path}',
      '{served_as}',
    ];
    const restarts = () =>
      replicas.map(
        (replica) => replica.requests.filter((request) => request.path === '/_test/restart').length,
      );
    try {
      const method = { kind: 'restart' as const, logFile, pollIntervalMs: 20, timeoutMs: 5_000 };
      const each = await deployToReplicas(servers, {
        generation,
        method: { ...method, argv: [...command, '{base_url}'] },
      });
      expect(each.map((deployment) => deployment.servedAs)).toEqual(['mass-L1', 'mass-L1']);
      expect(restarts()).toEqual([1, 1]);
      // A command that restarts every replica itself (here it names both): run once, both waited for.
      const once = await deployToReplicas(servers, {
        generation: { ...generation, servedAs: 'mass-L1b' },
        method: { ...method, argv: [...command, ...servers.map((server) => server.baseUrl)] },
      });
      expect(once).toHaveLength(2);
      expect(restarts()).toEqual([2, 2]);
      expect(replicas.map((replica) => replica.models().map((model) => model.id))).toEqual([
        ['mass-L1b'],
        ['mass-L1b'],
      ]);
      const log = readFileSync(logFile, 'utf8');
      expect(log.match(/^restarting /gm)).toHaveLength(3);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });
});
