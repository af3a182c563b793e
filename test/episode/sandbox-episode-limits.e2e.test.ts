import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { runEpisode } from '../../src/episode/run-episode.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { processesMentioning, uniqueMarker } from './sandbox-helpers.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const directory = temporaryDirectory();
const servers: ScriptedServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  directory.remove();
});

/** A real episode (qwen-code in the sandbox) whose orchestrator runs `command` in its shell, then says it is done. */
async function episodeRunning(
  command: string,
  name: string,
  limits: { processLimit?: number; diskBytes?: number },
) {
  const team = scriptedTeam({
    orchestrator: [
      step.toolCall('run_shell_command', { command, description: 'work' }),
      step.text('Finished.'),
    ],
  });
  const server = await startScriptedServer({ responder: team.responder });
  servers.push(server);
  return runEpisode({
    taskDir,
    model: 'm',
    baseUrl: server.baseUrl,
    seed: 1,
    outDir: join(directory.path, name),
    timeoutSeconds: 120,
    ...limits,
  });
}

describe('an episode over its process or disk limit', () => {
  it('is stopped at the process limit, and its record says so', async () => {
    const marker = uniqueMarker();
    const { record } = await episodeRunning(
      `for i in $(seq 300); do sh -c 'sleep 1000' ${marker} & done; wait`,
      'processes',
      { processLimit: 100 },
    );
    expect(record.sandbox.limitExceeded).toBe('processes');
    expect(record.status).toBe('failure');
    expect(record.failure).toMatchObject({ kind: 'resource_limit' });
    expect(record.failure?.detail).toMatch(/process limit/);
    expect(processesMentioning(marker)).toEqual([]);
  }, 120_000);

  it('is stopped at the disk limit, and its record says so', async () => {
    const { record } = await episodeRunning(
      'for i in 1 2 3 4 5 6; do head -c 8388608 /dev/zero > "part-$i"; done; sleep 1000',
      'disk',
      { diskBytes: 32 * 1024 * 1024 },
    );
    expect(record.sandbox.limitExceeded).toBe('disk');
    expect(record.status).toBe('failure');
    expect(record.failure).toMatchObject({ kind: 'resource_limit' });
    expect(record.failure?.detail).toMatch(/disk limit/);
  }, 120_000);
});
