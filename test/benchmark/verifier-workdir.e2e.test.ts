import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { verifyTrial } from '../../src/benchmark/verifier.js';
import { BubblewrapTrialEnvironment } from '../../src/episode/trial-environment-bubblewrap.js';
import type { HarborTask } from '../../src/tasks/harbor-task.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * A test.sh that reads the agent's answer by a relative path, as Harbor tasks may: Harbor runs it from the
 * environment's working folder (where the agent's commands start), never from `/tests`.
 */
const TEST_SH = `#!/bin/bash
echo "from $PWD"
tr -d '[:space:]' < answer.txt > /logs/verifier/reward.txt
`;

describe('the verifier’s working folder', () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('runs test.sh from the bubblewrap trial’s workspace, so that a relative path reaches the agent’s files', async () => {
    const taskDir = join(directory.path, 'relative-answer');
    mkdirSync(join(taskDir, 'tests'), { recursive: true });
    writeFileSync(join(taskDir, 'tests', 'test.sh'), TEST_SH);
    const workspace = join(directory.path, 'workspace');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'answer.txt'), '0.75\n');
    const environment = await BubblewrapTrialEnvironment.create({
      mode: 'bubblewrap',
      workspace,
      root: join(directory.path, 'root'),
    });
    const task = {
      dir: taskDir,
      verifierUser: null,
      verifierTimeoutSec: 60,
      memoryBytes: null,
      environmentEnv: {},
      verifierEnv: {},
    } as unknown as HarborTask;
    const verification = await verifyTrial({
      task,
      environment,
      verifierDir: join(directory.path, 'verifier'),
    });
    expect(verification.stdoutTail).toContain(`from ${environment.workdir}`);
    expect(verification).toMatchObject({ status: 'scored', reward: 0.75, exitCode: 0 });
  });
});
