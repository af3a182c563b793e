import { describe, expect, it } from 'vitest';

import { runReferenceAgent } from '../../src/benchmark/reference-agents.js';
import type { TrialCommand, TrialEnvironment } from '../../src/episode/trial-environment.js';
import type { HarborTask } from '../../src/tasks/harbor-task.js';
import { sandboxResult } from '../support/sandbox-result.js';

/** An environment whose one command prints `printed` and exits with `exitCode`, as solve.sh would. */
function scriptedEnvironment(printed: string, exitCode: number): TrialEnvironment {
  const result = sandboxResult({ exitCode });
  return {
    kind: 'bubblewrap',
    workdir: '/workspace',
    socketDirectory: '/tmp/sockets',
    proxyBaseUrl: 'http://127.0.0.1:18080',
    egressProxyUrl: 'http://127.0.0.1:18081',
    sharedDirectory: { host: '/tmp/shared', inside: '/shared' },
    exec: async (command: TrialCommand) => {
      if (printed !== '' && command.stdout && 'onData' in command.stdout)
        command.stdout.onData(Buffer.from(printed));
      return result;
    },
    putFiles: async () => {},
    getFiles: async () => null,
    remove: async () => {},
  };
}

const TASK = {
  dir: '/datasets/d/t',
  hasSolution: true,
  agentUser: null,
  environmentEnv: {},
  solutionEnv: {},
  agentTimeoutSec: 60,
  memoryBytes: null,
} as unknown as HarborTask;

describe("the oracle's output", () => {
  it('a failing solve.sh shows its last lines in the failure', async () => {
    const printed = [
      'step 1',
      'step 2',
      'step 3',
      'step 4',
      'step 5',
      'cp: cannot create /app/run.py: Read-only file system',
      '',
    ].join('\n');
    const run = await runReferenceAgent({
      agent: 'oracle',
      task: TASK,
      environment: scriptedEnvironment(printed, 1),
    });
    expect(run).toMatchObject({ status: 'failed', output: printed });
    expect(run.failure).toBe(
      'solve.sh exited with 1; its last lines:\nstep 2\nstep 3\nstep 4\nstep 5\ncp: cannot create /app/run.py: Read-only file system',
    );
  });

  it('one that failed printing nothing says so', async () => {
    const run = await runReferenceAgent({
      agent: 'oracle',
      task: TASK,
      environment: scriptedEnvironment('', 2),
    });
    expect(run.failure).toBe('solve.sh exited with 2, printing nothing');
  });
});
