import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { readReward, verificationOutcome, verifierInvocation } from '../../src/benchmark/verifier.js';
import { temporaryDirectory } from '../support/fixtures.js';

const MASS_MINI = fileURLToPath(new URL('../../benchmarks/mass-mini', import.meta.url));

/**
 * The agent's code, run by a verifier that imports it, tries to score without solving: by writing the reward and
 * killing the verifier, by leaving a process that writes it after the verifier's own, by putting a link where the
 * reward goes. Each workspace's module is run by the bundled task's own test.sh, as `check.sh` and Harbor run it, and
 * the outcome is read as mass reads it.
 */
describe("agent code in mass-mini's verifiers", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());
  let count = 0;

  async function verify(task: string, module: { name: string; text: (logs: string) => string }) {
    const root = join(directory.path, `case-${count++}`);
    const workspace = join(root, 'workspace');
    const logs = join(root, 'logs');
    cpSync(join(MASS_MINI, task, 'environment'), workspace, { recursive: true });
    mkdirSync(logs, { recursive: true });
    writeFileSync(join(workspace, module.name), module.text(logs));
    const run = spawnSync('bash', [join(MASS_MINI, task, 'tests', 'test.sh')], {
      cwd: workspace,
      env: {
        PATH: process.env['PATH']!,
        LOGS_DIR: logs,
        TESTS_DIR: join(MASS_MINI, task, 'tests'),
        WORKSPACE: workspace,
      },
      encoding: 'utf8',
      timeout: 90_000,
    });
    const outcome = verificationOutcome({
      run: {
        exitCode: run.status ?? (run.signal === null ? null : 128 + signalNumber(run.signal)),
        timedOut: false,
        limitExceeded: null,
        signal: null,
        wallSeconds: 0,
      },
      reward: await readReward(logs),
      outputs: { leftOut: [], stdoutTail: run.stdout, stderrTail: run.stderr },
      task: { verifierTimeoutSec: 90 },
    });
    return { outcome, logs, root };
  }

  it('a module that writes reward.json and kills the verifier does not score', async () => {
    const { outcome, logs } = await verify('implement-rle', {
      name: 'rle.py',
      text: (logs) =>
        [
          'import os, signal',
          `open(${JSON.stringify(join(logs, 'reward.json'))}, "w").write('{"reward": 1.0}')`,
          'os.kill(os.getppid(), signal.SIGKILL)',
        ].join('\n'),
    });
    expect(outcome.reward).toBeNull();
    expect(outcome).toMatchObject({ status: 'crashed', exitCode: 137 });
    // The file is there, and not believed.
    expect(readFileSync(join(logs, 'reward.json'), 'utf8')).toBe('{"reward": 1.0}');
  }, 120_000);

  it('a process the module leaves behind, writing reward.txt over and over, is ended before the reward is written', async () => {
    const { outcome, root } = await verify('fix-interval-merge', {
      name: 'intervals.py',
      text: (logs) =>
        [
          'import os, time',
          'if os.fork() == 0:',
          '    os.setsid()',
          '    if os.fork() == 0:',
          `        open(${JSON.stringify(join(logs, '..', 'daemon.pid'))}, "w").write(str(os.getpid()))`,
          '        end = time.time() + 8',
          '        while time.time() < end:',
          `            try: open(${JSON.stringify(join(logs, 'reward.txt'))}, "w").write("1\\n")`,
          '            except OSError: pass',
          '            time.sleep(0.005)',
          '    os._exit(0)',
          'def merge_intervals(intervals): return []',
          'def total_length(intervals): return 0',
        ].join('\n'),
    });
    // Long after the verifier ended, nothing of the module is alive to write again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(outcome).toMatchObject({ status: 'scored', reward: 0 });
    expect(await readReward(join(root, 'logs'))).toMatchObject({ kind: 'scored', reward: 0 });
    expect(alive(Number(readFileSync(join(root, 'daemon.pid'), 'utf8')))).toBe(false);
  }, 120_000);

  it('a link put where the reward goes is replaced, and the host file it named is never written', async () => {
    const hostFile = join(directory.path, 'host-file.json');
    writeFileSync(hostFile, '{"kept": true}');
    const { outcome, logs } = await verify('implement-rle', {
      name: 'rle.py',
      text: (logs) =>
        [
          'import os',
          `target = ${JSON.stringify(join(logs, 'reward.json'))}`,
          'if os.path.lexists(target): os.unlink(target)',
          `os.symlink(${JSON.stringify(hostFile)}, target)`,
          'def encode(text): return ""',
          'def decode(code): return ""',
        ].join('\n'),
    });
    expect(readFileSync(hostFile, 'utf8')).toBe('{"kept": true}');
    expect(outcome).toMatchObject({ status: 'scored', rewardFile: 'reward.json' });
    expect(outcome.reward).toBeLessThan(0.2);
    expect(JSON.parse(readFileSync(join(logs, 'reward.json'), 'utf8'))).toMatchObject({ cases_total: 34 });
  }, 120_000);

  it("python3 -m pytest run from the agent's workspace does not import the agent's pytest.py", () => {
    const workspace = join(directory.path, 'pytest-workspace');
    const marker = join(directory.path, 'pytest-imported');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'pytest.py'), `open(${JSON.stringify(marker)}, "w").write("forged")\n`);
    const { env } = verifierInvocation(
      { environmentEnv: {}, verifierEnv: {}, verifierUser: null },
      workspace,
    );
    const run = spawnSync('bash', ['-c', 'cd "$WORKSPACE" && python3 -m pytest --version'], {
      env: { PATH: process.env['PATH']!, ...env },
      encoding: 'utf8',
    });
    expect(run.status).not.toBe(null);
    expect(existsSync(marker)).toBe(false);
  });
});

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
