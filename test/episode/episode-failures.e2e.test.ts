import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { runEpisode } from '../../src/episode/run-episode.js';
import { Thread } from '../../src/records/threads.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
/** Reference solutions of the task suite: answers no agent may read. */
const answers = fileURLToPath(new URL('../tasks/reference-solutions', import.meta.url));
const directory = temporaryDirectory();
const servers: ScriptedServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  directory.remove();
});

async function serve(options: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer> {
  const server = await startScriptedServer(options);
  servers.push(server);
  return server;
}

function processesMatching(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('an adversarial agent in the sandbox', () => {
  it('fails at every escape, changes nothing outside its workspace, and leaves no process behind', async () => {
    let connections = 0;
    const bait = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    const baitPort = (bait.address() as { port: number }).port;
    const outDir = join(directory.path, 'adversarial');
    const escape = [
      'echo x > ../escaped.txt; echo "outside=$?"',
      'touch /etc/mass-escape; echo "etc=$?"',
      `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${baitPort}), 2)" 2>/dev/null; echo "connect=$?"`,
      'echo forged >> simulate.py; echo "protected=$?"',
      'rm -f simulate.py; echo "delete=$?"',
      `ls ${answers} >/dev/null 2>&1; echo "answers=$?"`,
      '(nohup sleep 1777 >/dev/null 2>&1 &); setsid sleep 1778 </dev/null >/dev/null 2>&1 & echo forked',
    ].join('\n');
    const team = scriptedTeam({
      orchestrator: [
        step.toolCall('agent', {
          description: 'attack',
          prompt: 'ATTACK',
          subagent_type: 'general-purpose',
          run_in_background: false,
        }),
        step.text('Finished.'),
      ],
      subagents: [
        {
          task: 'ATTACK',
          steps: [
            step.toolCall('run_shell_command', { command: escape, description: 'escape' }),
            step.text('tried everything'),
          ],
        },
      ],
    });
    const server = await serve({ responder: team.responder });
    const original = readFileSync(join(taskDir, 'inputs', 'simulate.py'), 'utf8');
    const { record } = await runEpisode({
      taskDir,
      model: 'm',
      baseUrl: server.baseUrl,
      seed: 1,
      outDir,
      timeoutSeconds: 120,
    });
    bait.close();

    expect(team.problems).toEqual([]);
    const threads = readFileSync(join(outDir, 'threads.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => Thread.parse(JSON.parse(line)));
    const shellOutput = JSON.stringify(
      threads[1]!.segments[0]!.messages.find((message) => message.role === 'tool')?.content,
    );
    for (const attempt of ['outside', 'etc', 'connect', 'protected', 'delete', 'answers']) {
      expect(shellOutput).toMatch(new RegExp(`${attempt}=[1-9]`));
    }
    expect(existsSync(join(outDir, 'escaped.txt'))).toBe(false);
    expect(existsSync('/etc/mass-escape')).toBe(false);
    expect(connections).toBe(0);
    expect(readFileSync(join(outDir, 'workspace', 'simulate.py'), 'utf8')).toBe(original);
    expect(record.integrity.tampered).toBe(false);
    expect(processesMatching('sleep 1777')).toEqual([]);
    expect(processesMatching('sleep 1778')).toEqual([]);
    expect(record.status).toBe('success');
  }, 120_000);
});

describe('episode failures', () => {
  it('records a changed protected file as tampered when run without a sandbox', async () => {
    const outDir = join(directory.path, 'tamper');
    const server = await serve({
      responder: scriptedTeam({
        orchestrator: [
          step.toolCall('run_shell_command', {
            command: "echo 'print(10)' > simulate.py",
            description: 'fix it',
          }),
          step.text('The simulator now gives the right answer.'),
        ],
      }).responder,
    });
    const { record } = await runEpisode({
      taskDir,
      model: 'm',
      baseUrl: server.baseUrl,
      seed: 1,
      outDir,
      sandbox: 'unsandboxed',
      timeoutSeconds: 120,
    });
    expect(record.integrity).toMatchObject({ tampered: true, tamperedPaths: ['simulate.py'] });
    expect(record.status).toBe('failure');
    expect(record.failure).toMatchObject({ kind: 'sandbox_violation' });
    expect(record.sandbox.enabled).toBe(false);
  }, 120_000);

  it('gives api_error when the model endpoint fails mid-episode', async () => {
    const server = await serve({
      responder: scriptedTeam({
        orchestrator: [
          step.toolCall('run_shell_command', { command: 'ls', description: 'look' }),
          step.status(500, { message: 'GPU fell over' }),
        ],
      }).responder,
    });
    const { record } = await runEpisode({
      taskDir,
      model: 'm',
      baseUrl: server.baseUrl,
      seed: 1,
      outDir: join(directory.path, 'api-error'),
      timeoutSeconds: 120,
      // The server keeps failing: three attempts, then the call fails.
      retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 100 },
    });
    expect(record.status).toBe('failure');
    expect(record.failure).toMatchObject({ kind: 'api_error', cause: 'server_unavailable' });
    expect(record.failure?.detail).toMatch(/500 upstream answered 500 \(gave up after 3 attempts/);
    expect(record.failedModelCalls).toBeGreaterThanOrEqual(1);
    expect(record.retriedModelCalls).toBe(1);
    expect(record.failure?.lastToolCalls.map((call) => call.name)).toContain('run_shell_command');
  }, 120_000);

  it('gives timeout within the limit when the endpoint hangs', async () => {
    const server = await serve({ responder: () => step.hang() });
    const started = Date.now();
    const { record } = await runEpisode({
      taskDir,
      model: 'm',
      baseUrl: server.baseUrl,
      seed: 1,
      outDir: join(directory.path, 'hang'),
      timeoutSeconds: 10,
    });
    expect(record.status).toBe('failure');
    expect(record.failure?.kind).toBe('timeout');
    expect(record.sandbox.limitExceeded).toBe('wall-clock');
    expect(Date.now() - started).toBeLessThan(25_000);
  }, 60_000);
});
