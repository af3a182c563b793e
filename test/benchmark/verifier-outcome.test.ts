import { describe, expect, it } from 'vitest';

import { verificationOutcome, verifierInvocation, type RewardRead } from '../../src/benchmark/verifier.js';

const TASK = { verifierTimeoutSec: 60 };
const QUIET = { leftOut: [], stdoutTail: '', stderrTail: '' };
const ONE: RewardRead = { kind: 'scored', reward: 1, rewards: null, file: 'reward.txt' };
const ZERO: RewardRead = { kind: 'scored', reward: 0, rewards: null, file: 'reward.txt' };

function ended(
  run: Partial<Parameters<typeof verificationOutcome>[0]['run']>,
  reward: RewardRead,
  outputs = QUIET,
) {
  return verificationOutcome({
    run: { exitCode: 0, timedOut: false, limitExceeded: null, signal: null, wallSeconds: 1.234, ...run },
    reward,
    outputs,
    task: TASK,
  });
}

describe('how a verification ended', () => {
  it('a reward left by a verifier killed by a signal is never read: the agent’s code may have written it', () => {
    // What a module that writes reward.txt and then kills the verifier leaves: 1 in the file, exit 128 + 9.
    const killed = ended({ exitCode: 137 }, ONE);
    expect(killed).toMatchObject({ status: 'crashed', reward: null, rewardFile: null, exitCode: 137 });
    expect(killed.detail).toBe(
      'test.sh was killed by signal 9 (exit 137); the reward file it left is not trusted: code it ran may have written it before ending the verifier',
    );
    expect(ended({ exitCode: 143 }, { kind: 'none' }).detail).toBe(
      'test.sh was killed by signal 15 (exit 143)',
    );
    expect(ended({ exitCode: null, signal: 'SIGKILL' }, ONE)).toMatchObject({
      status: 'crashed',
      reward: null,
    });
    expect(ended({ exitCode: 137, limitExceeded: 'memory' }, ONE)).toMatchObject({
      status: 'crashed',
      reward: null,
      detail: 'test.sh was stopped at the memory limit; the reward file it left is not trusted',
    });
    expect(ended({ exitCode: 137, timedOut: true }, ONE)).toMatchObject({ status: 'timeout', reward: null });
  });

  it('a test.sh that fails before writing a reward is its set-up failing, apart from a wrong answer and from no reward', () => {
    const setup = ended(
      { exitCode: 127 },
      { kind: 'none' },
      { ...QUIET, stderrTail: 'test.sh: line 4: uvx: command not found\n' },
    );
    expect(setup).toMatchObject({ status: 'setup-failed', reward: null, exitCode: 127 });
    expect(setup.detail).toBe(
      'test.sh exited with 127 without writing a reward: it failed before its tests judged the work (its set-up, such as installing its test runner, or the verifier itself); its output says "test.sh: line 4: uvx: command not found": its set-up may have failed',
    );
    expect(ended({ exitCode: 0 }, { kind: 'none' })).toMatchObject({ status: 'no-reward' });
    expect(ended({ exitCode: 0 }, ZERO)).toMatchObject({
      status: 'scored',
      reward: 0,
      detail: null,
      wallSeconds: 1.23,
    });
  });

  it('a sandbox whose own set-up failed never ran test.sh: crashed whatever its exit code, with what the sandbox said', () => {
    const unstarted = ended(
      { exitCode: 1, started: false },
      { kind: 'none' },
      {
        ...QUIET,
        stderrTail: '\nbwrap: Creating new namespace failed: Resource temporarily unavailable\n',
      },
    );
    expect(unstarted).toMatchObject({ status: 'crashed', reward: null, exitCode: 1 });
    expect(unstarted.detail).toBe(
      'test.sh never started: the sandbox\'s own set-up failed, each of the 2 times it was opened ("bwrap: Creating new namespace failed: Resource temporarily unavailable")',
    );
    // The launcher's exit code is not test.sh's: 125 from a forwarder that did not start is no set-up of the task.
    expect(ended({ exitCode: 125, started: false }, { kind: 'none' }).detail).toBe(
      "test.sh never started: the sandbox's own set-up failed, each of the 2 times it was opened",
    );
    // Started, then failed before its reward: that is test.sh's own set-up.
    expect(ended({ exitCode: 1, started: true }, { kind: 'none' })).toMatchObject({ status: 'setup-failed' });
  });

  it('a zero written after a runner that was never installed keeps its reward, with the hint beside it', () => {
    const hinted = ended({ exitCode: 0 }, ZERO, {
      ...QUIET,
      stdoutTail: 'bash: pytest: command not found\n',
    });
    expect(hinted).toMatchObject({ status: 'scored', reward: 0 });
    expect(hinted.detail).toBe(
      'its output says "bash: pytest: command not found": its set-up may have failed',
    );
    expect(ended({ exitCode: 1 }, ONE)).toMatchObject({
      status: 'scored',
      reward: 1,
      detail: 'test.sh exited with 1 after writing its reward',
    });
    expect(ended({ exitCode: 0 }, { kind: 'bad', detail: 'reward.txt holds "x"' })).toMatchObject({
      status: 'bad-reward',
    });
  });

  it('runs test.sh from the environment’s working folder with it off Python’s module search path, whatever the task sets', () => {
    const invocation = verifierInvocation(
      {
        environmentEnv: { PYTHONSAFEPATH: '', APP: '1' },
        verifierEnv: { PYTHONSAFEPATH: '0', MODE: 'strict' },
        verifierUser: 'root',
      },
      '/app',
    );
    expect(invocation).toEqual({
      command: ['bash', '/tests/test.sh'],
      user: 'root',
      cwd: '/app',
      env: {
        APP: '1',
        MODE: 'strict',
        PYTHONSAFEPATH: '1',
        PYTHONDONTWRITEBYTECODE: '1',
        TESTS_DIR: '/tests',
        LOGS_DIR: '/logs/verifier',
        WORKSPACE: '/app',
      },
    });
  });
});
