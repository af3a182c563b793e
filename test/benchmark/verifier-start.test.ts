import { mkdirSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { verifyTrial } from '../../src/benchmark/verifier.js';
import type { TrialCommand, TrialEnvironment } from '../../src/episode/trial-environment.js';
import { loadHarborTask } from '../../src/tasks/harbor-task.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { sandboxResult } from '../support/sandbox-result.js';
import { writeHarborTask } from '../tasks/harbor-fixtures.js';

const directory = temporaryDirectory('mass-verifier-start-');
afterAll(() => directory.remove());

const RUN = sandboxResult();
const UNSTARTED = { ...RUN, exitCode: 1, started: false };
const BWRAP_FAILED = 'bwrap: Creating new namespace failed: Resource temporarily unavailable\n';

/**
 * A trial environment that plays its sandbox's starts: each `exec` takes the next of `starts`. An unstarted one says
 * what bubblewrap says and leaves nothing; a started one is test.sh writing a reward of 1.
 */
function environmentStarting(starts: boolean[]): TrialEnvironment & { execs: TrialCommand[] } {
  const logs = join(directory.path, `logs-${starts.join('-')}`);
  const execs: TrialCommand[] = [];
  let rewardWritten = false;
  return {
    kind: 'bubblewrap',
    workdir: '/workspace',
    socketDirectory: directory.path,
    proxyBaseUrl: 'http://127.0.0.1:18080',
    egressProxyUrl: 'http://127.0.0.1:18081',
    sharedDirectory: { host: directory.path, inside: '/run/mass-sandbox' },
    execs,
    async exec(command) {
      execs.push(command);
      const started = starts[execs.length - 1] ?? true;
      if (!started) {
        if (command.stderr && 'onData' in command.stderr) command.stderr.onData(Buffer.from(BWRAP_FAILED));
        return UNSTARTED;
      }
      mkdirSync(logs, { recursive: true });
      writeFileSync(join(logs, 'reward.txt'), '1\n');
      rewardWritten = true;
      return { ...RUN, started: true };
    },
    async putFiles() {},
    async getFiles(_inside, hostFolder) {
      if (rewardWritten) await cp(logs, hostFolder, { recursive: true });
      else mkdirSync(hostFolder, { recursive: true });
      return { files: rewardWritten ? 1 : 0, bytes: 2, links: [], clearedBits: [], leftOut: [] };
    },
    async remove() {},
  };
}

describe("a verification whose sandbox's own set-up fails", () => {
  it('opens the sandbox once more: test.sh then runs and its reward counts', async () => {
    const task = await loadHarborTask(
      writeHarborTask(directory.path, 'once', { 'task.toml': 'version = "1.0"\n' }),
    );
    const environment = environmentStarting([false, true]);
    const verification = await verifyTrial({
      task,
      environment,
      verifierDir: join(directory.path, 'verifier-once'),
    });
    expect(environment.execs).toHaveLength(2);
    expect(verification).toMatchObject({ status: 'scored', reward: 1, detail: null, stderrTail: '' });
  });

  it('gives up after the second failed start: crashed, with bubblewrap’s words, never set-up-failed', async () => {
    const task = await loadHarborTask(
      writeHarborTask(directory.path, 'twice', { 'task.toml': 'version = "1.0"\n' }),
    );
    const environment = environmentStarting([false, false, true]);
    const verification = await verifyTrial({
      task,
      environment,
      verifierDir: join(directory.path, 'verifier-twice'),
    });
    expect(environment.execs).toHaveLength(2);
    expect(verification).toMatchObject({ status: 'crashed', reward: null, exitCode: 1 });
    expect(verification.detail).toBe(
      `test.sh never started: the sandbox's own set-up failed, 2 times ("${BWRAP_FAILED.trim()}")`,
    );
  });

  it('runs a started test.sh once, whatever it exits with', async () => {
    const task = await loadHarborTask(
      writeHarborTask(directory.path, 'started', { 'task.toml': 'version = "1.0"\n' }),
    );
    const environment = environmentStarting([true]);
    await verifyTrial({ task, environment, verifierDir: join(directory.path, 'verifier-started') });
    expect(environment.execs).toHaveLength(1);
  });
});
