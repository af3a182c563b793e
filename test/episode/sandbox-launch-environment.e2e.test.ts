import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { capture, openSandbox, type SandboxFixture } from './sandbox-helpers.js';

/**
 * A command's variables come from tasks and datasets (a Harbor task's `[environment.env]`, its verifier's `env`). They
 * reach the command inside the sandbox, never the processes that start the sandbox on the host: there the dynamic
 * loader would honour a task's `LD_PRELOAD = "./x.so"`, a library of the workspace (the launch's folder), and run it
 * as the host's user (root, when mass is root) before anything is isolated. Inside, pid 1 is the sandbox's own bwrap:
 * its environment is what the host gave it.
 */
describe('sandbox: a command’s variables never reach the host processes that launch it', () => {
  let fixture: SandboxFixture;
  beforeAll(async () => {
    fixture = await openSandbox('bubblewrap');
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('gives LD_PRELOAD and the task’s variables to the command alone', async () => {
    const output = capture();
    const result = await fixture.sandbox.run({
      command: 'bash',
      args: [
        '-c',
        'echo "command: $FROM_TASK $LD_PRELOAD"; echo launcher:; tr "\\0" "\\n" < /proc/1/environ',
      ],
      env: { FROM_TASK: 'task-value', LD_PRELOAD: './mass-no-such-preload.so' },
      stdout: output.sink,
    });
    expect(result.exitCode).toBe(0);
    const [command, launcher] = output.text().split('launcher:\n');
    expect(command).toContain('command: task-value ./mass-no-such-preload.so');
    // The launch's environment is readable (pid 1 is the sandbox's bwrap): the run's marker, and the folder bwrap
    // itself notes, nothing of the command's.
    const names = launcher!
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0]);
    expect(names).toContain('MASS_SANDBOX_RUN');
    expect(names.filter((name) => name !== 'MASS_SANDBOX_RUN' && name !== 'PWD')).toEqual([]);
  });
});
