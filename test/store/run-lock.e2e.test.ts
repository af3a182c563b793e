import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { pidOfExitedProcess, startProcessInsideStep } from './__fixtures__/child-process.js';
import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';
import { LockOwner } from '../../src/store/run-lock.js';

function writeLock(runDirectory: string, owner: Partial<LockOwner>): string {
  const path = join(runDirectory, 'mass.lock');
  const lock: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    token: 'written-by-the-test',
    acquiredAt: '2025-01-01T00:00:00.000Z',
    ...owner,
  };
  writeFileSync(path, JSON.stringify(lock));
  return path;
}

/** Starts the test run and closes it, so the test decides who holds its lock. */
function startRun(runsDirectory: string): string {
  const run = openTestRun(runsDirectory);
  run.close();
  return run.directory;
}

function lockHolderPid(runDirectory: string): number {
  return LockOwner.parse(JSON.parse(readFileSync(join(runDirectory, 'mass.lock'), 'utf8'))).pid;
}

describe('the run lock', () => {
  it('refuses a run held by another live process, naming it, and takes it over once that process is killed', async () => {
    const runsDirectory = temporaryDirectory();
    const runDirectory = startRun(runsDirectory);
    const holder = await startProcessInsideStep(runsDirectory, 'test-run');

    try {
      expect(() => openTestRun(runsDirectory)).toThrow(UserError);
      expect(() => openTestRun(runsDirectory)).toThrow(
        `this run is in use by "hold-step fixture" (pid ${holder.pid}, since `,
      );
      expect(() => openTestRun(runsDirectory)).toThrow(
        `Wait for it to finish or stop it; if that process is gone, delete ${join(runDirectory, 'mass.lock')}.`,
      );
    } finally {
      await holder.kill();
    }

    openTestRun(runsDirectory);
    expect(lockHolderPid(runDirectory)).toBe(process.pid);
  });

  it('takes over a lock whose process has exited', async () => {
    const runsDirectory = temporaryDirectory();
    const runDirectory = startRun(runsDirectory);
    writeLock(runDirectory, { pid: await pidOfExitedProcess() });

    openTestRun(runsDirectory);

    expect(lockHolderPid(runDirectory)).toBe(process.pid);
  });

  it('takes over a lock whose pid now belongs to a different process', () => {
    const runsDirectory = temporaryDirectory();
    const runDirectory = startRun(runsDirectory);
    writeLock(runDirectory, { pid: process.pid, processStartTime: 'long before this process started' });

    openTestRun(runsDirectory);

    expect(lockHolderPid(runDirectory)).toBe(process.pid);
  });

  it('refuses a second opening in the same process until the first is closed', () => {
    const runsDirectory = temporaryDirectory();
    const first = openTestRun(runsDirectory);

    expect(() => openTestRun(runsDirectory)).toThrow(`(pid ${process.pid}, since `);
    first.close();

    expect(() => openTestRun(runsDirectory).close()).not.toThrow();
    expect(existsSync(join(first.directory, 'mass.lock'))).toBe(false);
  });

  it('treats a lock held on another host as live', () => {
    const runsDirectory = temporaryDirectory();
    const runDirectory = startRun(runsDirectory);
    writeLock(runDirectory, { hostname: 'another-machine', pid: 4242, command: 'mass search' });

    expect(() => openTestRun(runsDirectory)).toThrow(
      'this run is in use by "mass search" (pid 4242 on host another-machine, since 2025-01-01T00:00:00.000Z)',
    );
  });

  it('refuses a corrupt lock file, saying what to do', () => {
    const runsDirectory = temporaryDirectory();
    const runDirectory = startRun(runsDirectory);
    const lockPath = join(runDirectory, 'mass.lock');
    writeFileSync(lockPath, 'garbage');

    expect(() => openTestRun(runsDirectory)).toThrow(
      `${lockPath} is corrupt: it is not a mass lock file. If no mass command is working on this run, delete it.`,
    );
  });
});
