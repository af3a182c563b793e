import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SandboxMode } from '../../src/episode/sandbox.js';
import {
  capture,
  openSandbox,
  processesMentioning,
  uniqueMarker,
  type SandboxFixture,
} from './sandbox-helpers.js';

const MiB = 1024 * 1024;

/** Touches 20 MiB more every few milliseconds, up to 2 GiB, printing how far it got. */
const ALLOCATE_PYTHON = `
import time
blocks = []
for index in range(100):
    blocks.append(bytearray(b'x' * (20 * 1024 * 1024)))
    print(len(blocks) * 20, flush=True)
    time.sleep(0.005)
`;

/** The limit cases, run in one test file per mode (so that the two run in parallel). */
export function describeLimits(mode: SandboxMode): void {
  describe(`sandbox limits (${mode})`, () => {
    let fixture: SandboxFixture;
    beforeAll(async () => {
      fixture = await openSandbox(mode);
    });
    afterAll(() => fixture.close());

    it('kills the whole tree at the wall-clock limit', async () => {
      const marker = uniqueMarker();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        args: ['-c', 'sleep 1000 & sleep 1000; wait'],
        env: { MARKER: marker },
        limits: { wallClockSeconds: 0.5 },
      });
      expect(result).toMatchObject({ timedOut: true, limitExceeded: 'wall-clock', signal: 'SIGKILL' });
      expect(result.wallSeconds).toBeGreaterThanOrEqual(0.5);
      expect(result.wallSeconds).toBeLessThan(1.5);
      expect(processesMentioning(marker)).toEqual([]);
    });

    it('kills a process that allocates past the memory limit', async () => {
      const progress = capture();
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', ALLOCATE_PYTHON],
        stdout: progress.sink,
        limits: { memoryBytes: 200 * MiB, wallClockSeconds: 20 },
      });
      expect(result).toMatchObject({ timedOut: false, limitExceeded: 'memory' });
      expect(result.peakMemoryBytes).toBeGreaterThan(200 * MiB);
      const allocatedMiB = Number(progress.text().trim().split('\n').pop());
      // Noticed within a sample or two: far short of the 2 GiB it would have taken.
      expect(allocatedMiB).toBeLessThan(1000);
    });

    it('kills a busy loop at the CPU limit', async () => {
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', 'while True: pass'],
        limits: { cpuSeconds: 0.5, wallClockSeconds: 20 },
      });
      expect(result).toMatchObject({ timedOut: false, limitExceeded: 'cpu-time' });
      expect(result.cpuSeconds).toBeGreaterThan(0.5);
      expect(result.cpuSeconds).toBeLessThan(1.5);
    });

    it('counts the CPU of children that have already exited', async () => {
      const burst = 'import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass';
      const output = capture();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        args: ['-c', `for i in 1 2 3 4 5 6 7 8 9 10; do python3 -c "${burst}"; echo "$i"; done`],
        stdout: output.sink,
        limits: { cpuSeconds: 0.7, wallClockSeconds: 20 },
      });
      expect(result.limitExceeded).toBe('cpu-time');
      // Each burst exits before the next starts: only their sum can cross 0.7 s.
      const finished = output.text().trim().split('\n').filter(Boolean).length;
      expect(finished).toBeGreaterThanOrEqual(2);
      expect(finished).toBeLessThan(6);
    });

    it('kills a tree that starts more processes than its process limit', async () => {
      const marker = uniqueMarker();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        args: ['-c', 'for i in $(seq 300); do sleep 1000 & done 2>/dev/null; echo started; wait'],
        env: { MARKER: marker },
        limits: { processes: 100, wallClockSeconds: 60 },
      });
      expect(result).toMatchObject({ timedOut: false, limitExceeded: 'processes', signal: 'SIGKILL' });
      expect(result.peakProcesses).toBeGreaterThan(100);
      expect(processesMentioning(marker)).toEqual([]);
    });

    it('kills a tree that writes past its disk limit in the workspace and the home', async () => {
      const progress = capture();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        // Files below the limit each, past it together; then it would wait until the wall-clock limit.
        args: [
          '-c',
          'for i in 1 2 3 4; do head -c 6291456 /dev/zero > "part-$i" && echo "$i"; ' +
            'head -c 6291456 /dev/zero > "$HOME/part-$i"; done; sleep 1000',
        ],
        stdout: progress.sink,
        limits: { diskBytes: 32 * MiB, wallClockSeconds: 60 },
      });
      expect(result).toMatchObject({ timedOut: false, limitExceeded: 'disk', signal: 'SIGKILL' });
      expect(result.peakDiskBytes).toBeGreaterThanOrEqual(32 * MiB);
      expect(progress.text()).toBe('1\n2\n3\n4\n');
    });

    it('measures a run that stays within its limits', async () => {
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', 'import time\nblock = bytearray(b"x" * (64 * 1024 * 1024))\ntime.sleep(0.3)'],
        limits: { wallClockSeconds: 20, cpuSeconds: 20, memoryBytes: 1024 * MiB },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, limitExceeded: null, signal: null });
      expect(result.peakProcesses).toBeGreaterThanOrEqual(1);
      expect(result.peakMemoryBytes).toBeGreaterThan(64 * MiB);
      expect(result.peakMemoryBytes).toBeLessThan(256 * MiB);
    });
  });
}
