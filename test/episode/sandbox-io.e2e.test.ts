import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RUN_MARKER_VARIABLE } from '../../src/episode/sandbox.js';
import { reportStart, SANDBOX_OPENINGS } from '../../src/episode/sandbox-run.js';
import { MODES, capture, openSandbox, type SandboxFixture } from './sandbox-helpers.js';

describe.each(MODES)('sandbox input, output and environment (%s)', (mode) => {
  let fixture: SandboxFixture;
  beforeAll(async () => {
    fixture = await openSandbox(mode);
  });
  afterAll(() => fixture.close());

  it('feeds stdin, writes stdout to a file and stderr to a callback, and returns the exit code', async () => {
    const errors = capture();
    const stdoutFile = join(fixture.root, 'events.jsonl');
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', 'cat; head -c 20000000 /dev/zero | tr "\\0" x; echo " to stderr" >&2; exit 3'],
      stdin: 'the prompt\n',
      stdout: { file: stdoutFile },
      stderr: errors.sink,
    });
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, limitExceeded: null });
    expect(result.sandboxed).toBe(mode === 'bubblewrap');
    // The command wrote the file itself: 20 MB never passed through this process.
    expect(statSync(stdoutFile).size).toBe('the prompt\n'.length + 20_000_000);
    expect(readFileSync(stdoutFile, 'utf8').slice(0, 14)).toBe('the prompt\nxxx');
    expect(errors.text()).toBe(' to stderr\n');
  });

  it('says whether the command itself started: not when the sandbox’s own set-up failed, whatever the exit code', async () => {
    const output = capture();
    const ran = await fixture.sandbox.run({
      command: '/bin/sh',
      // The descriptor the start is reported on is closed before the command runs: agent code never holds it.
      args: ['-c', 'if [ -e /proc/$$/fd/3 ]; then echo fd-3-open; else echo fd-3-closed; fi; exit 1'],
      stdout: output.sink,
    });
    expect(ran.exitCode).toBe(1);
    if (mode !== 'bubblewrap') {
      expect(ran.started).toBeUndefined();
      return;
    }
    expect(ran.started).toBe(true);
    expect(output.text()).toBe('fd-3-closed\n');
    // bubblewrap cannot enter a working folder that does not exist: it fails before the command, with its own words.
    const errors = capture();
    const unstarted = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', 'exit 0'],
      cwd: 'no-such-folder',
      stderr: errors.sink,
    });
    expect(unstarted.started).toBe(false);
    expect(unstarted.exitCode).not.toBe(0);
    // Nothing of the command ran, so the sandbox was opened once more, and failed alike: bubblewrap said so twice.
    expect(errors.text().match(/^bwrap: .*$/gm)).toHaveLength(SANDBOX_OPENINGS);
    // A command whose start cannot be reported (no descriptor 3) is not run: a sandbox opened again never runs it twice.
    const [shell, ...prologue] = reportStart(['/bin/echo', 'ran']);
    const unreported = spawnSync(shell!, prologue, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    expect(unreported.status).toBe(125);
    expect(unreported.stdout).toBe('');
  });

  it('leaves no timer behind once the command has ended (the process can exit at once)', async () => {
    const timersBefore = activeTimers();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', 'echo done'],
      stdout: capture().sink,
    });
    expect(result.exitCode).toBe(0);
    expect(activeTimers()).toBeLessThanOrEqual(timersBefore);
  });

  it('runs in the workspace with Debian python first on PATH, HOME writable, and no host variable', async () => {
    process.env.MASS_HOST_ONLY_SECRET = 'not for agents';
    const output = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: [
        '-c',
        'pwd; command -v python3; python3 -c "import numpy; print(numpy.__name__)"; ' +
          'echo "$HOME"; touch "$HOME/written" && echo home-writable; echo "secret=${MASS_HOST_ONLY_SECRET:-none}"; ' +
          'echo "$TASK_VARIABLE"; echo "${PATH%%:*}"',
      ],
      env: { TASK_VARIABLE: 'given', PATH: '/root/.pyenv/shims:/usr/local/bin' },
      stdout: output.sink,
    });
    delete process.env.MASS_HOST_ONLY_SECRET;
    expect(result.exitCode).toBe(0);
    // In a sandbox the workspace and the home have fixed paths, whatever the host's; without one, the host's.
    expect(output.text().trim().split('\n')).toEqual([
      mode === 'bubblewrap' ? '/workspace' : fixture.workspace,
      '/usr/bin/python3',
      'numpy',
      mode === 'bubblewrap' ? '/home/agent' : fixture.sandbox.homeDirectory,
      'home-writable',
      'secret=none',
      'given',
      '/usr/bin',
    ]);
  });

  it('kills the tree when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', 'sleep 1000 & sleep 1000'],
      signal: controller.signal,
    });
    expect(result).toMatchObject({ aborted: true, signal: 'SIGKILL', limitExceeded: null });
    expect(result.wallSeconds).toBeLessThan(2);
  });

  it('marks each run with its own environment variable, which finds processes that leave the tree', async () => {
    const first = capture();
    const second = capture();
    await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', `echo $${RUN_MARKER_VARIABLE}`],
      stdout: first.sink,
    });
    await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', `echo $${RUN_MARKER_VARIABLE}`],
      stdout: second.sink,
    });
    expect(first.text()).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(second.text()).not.toBe(first.text());
  });
});

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}
