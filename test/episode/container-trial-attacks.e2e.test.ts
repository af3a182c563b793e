import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadHarborTask } from '../../src/tasks/harbor-task.js';
import { verifyTrial } from '../../src/benchmark/verifier.js';
import { ContainerTrialEnvironment } from '../../src/episode/trial-environment-container.js';
import { COPY_OUT_LIMITS } from '../../src/episode/container-copy-out.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * An agent that is root in its trial's container, attacking what the host does after its turn: a sparse file that the
 * engine's own `cp` would write out in full on the host, and files planted where the verifier's folders go in.
 */
const IMAGE = 'mass-bench/debian:bookworm';

function engineMissing(): string | null {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' });
    return null;
  } catch {
    return 'no docker daemon answers, or the bundled images are missing: run `bash scripts/install-container-engine.sh` (CI does)';
  }
}
const missing = engineMissing();
if (missing) console.warn(`container-trial-attacks.e2e: skipped: ${missing}`);

describe.skipIf(missing !== null)('a root agent in its trial container against the host', () => {
  const scratch = temporaryDirectory();
  let environment: ContainerTrialEnvironment;
  const limits = { ...COPY_OUT_LIMITS, maxFileBytes: 1024 * 1024, maxStreamBytes: 16 * 1024 * 1024 };

  beforeAll(async () => {
    environment = await ContainerTrialEnvironment.create({
      engine: 'docker',
      image: IMAGE,
      name: `mass-attack-${process.pid}`,
      stateDirectory: join(scratch.path, 'state'),
      handBackLimits: limits,
    });
  }, 60_000);
  afterAll(async () => {
    await environment?.remove();
    scratch.remove();
  });

  const asAgent = (script: string) =>
    environment.exec({ command: ['sh', '-c', script], user: '0', limits: { wallClockSeconds: 60 } });

  it('a sparse terabyte in the working folder costs the host no more than the hand-back cap', async () => {
    const made = await asAgent(
      'mkdir -p /app && echo kept > /app/small.txt && truncate -s 1T /app/sparse.bin',
    );
    expect(made.exitCode).toBe(0);
    const started = performance.now();
    const report = await environment.getFiles('/app', join(scratch.path, 'workspace'));
    expect((performance.now() - started) / 1000).toBeLessThan(30);
    expect(readdirSync(join(scratch.path, 'workspace'))).toEqual(['small.txt']);
    expect(report?.leftOut).toContainEqual({
      path: 'sparse.bin',
      reason: `${1024 ** 4} bytes, over the ${limits.maxFileBytes} handed back`,
    });
    // Nothing of the trial's state folder holds the file either (the staging is gone).
    const du = execFileSync('du', ['-sb', join(scratch.path, 'state')], { encoding: 'utf8' });
    expect(Number(du.split('\t')[0])).toBeLessThan(limits.maxStreamBytes);
  }, 90_000);

  it("a reward planted in /logs/verifier (reward.txt as a folder, reward.json of 1) is not the verifier's", async () => {
    const task = join(scratch.path, 'dataset', 'honest');
    mkdirSync(join(task, 'tests'), { recursive: true });
    writeFileSync(join(task, 'instruction.md'), 'Write 42 to /app/answer.txt.\n');
    writeFileSync(join(task, 'task.toml'), 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n');
    // Harbor's usual shape: the tests' verdict, then the reward, with no `set -e`.
    writeFileSync(
      join(task, 'tests', 'test.sh'),
      [
        '#!/bin/bash',
        'grep -qx 42 /app/answer.txt',
        'if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi',
        '',
      ].join('\n'),
    );
    const planted = await asAgent(
      `mkdir -p /logs/verifier/reward.txt && echo '{"reward": 1}' > /logs/verifier/reward.json`,
    );
    expect(planted.exitCode).toBe(0);
    const verification = await verifyTrial({
      task: await loadHarborTask(task),
      environment,
      verifierDir: join(scratch.path, 'verifier'),
    });
    expect(verification).toMatchObject({ status: 'scored', reward: 0, rewardFile: 'reward.txt' });
    expect(readdirSync(join(scratch.path, 'verifier', 'logs'))).toEqual(['reward.txt']);
  }, 90_000);

  it('sees only the forwarder’s Node of the host’s programs, and a working folder it made a link hands back nothing, without an error', async () => {
    const output: Buffer[] = [];
    const looked = await environment.exec({
      command: ['sh', '-c', 'ls -A /run/mass-node; rm -rf /work && ln -s / /work'],
      user: '0',
      stdout: { onData: (chunk) => output.push(chunk) },
    });
    expect(looked.exitCode).toBe(0);
    // Its folder was shown before: the host's whole /usr/bin, inside every trial's container.
    expect(Buffer.concat(output).toString('utf8')).toBe('node\n');
    const report = await environment.getFiles('/work', join(scratch.path, 'linked'));
    expect(readdirSync(join(scratch.path, 'linked'))).toEqual([]);
    expect(report?.links).toEqual([{ path: '.', target: '/' }]);
  }, 60_000);
});
