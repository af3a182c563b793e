import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  DEFAULT_DISK_BYTES,
  DEFAULT_PROCESS_LIMIT,
  THREADS_PER_PROCESS,
  defaultCpuSeconds,
  withDefaultLimits,
} from '../../src/episode/sandbox-limits.js';
import { describeLimits } from './sandbox-limits-cases.js';
import { capture, openSandbox, type SandboxFixture } from './sandbox-helpers.js';

describeLimits('bubblewrap');

const MiB = 1024 * 1024;

describe('sandbox limits: the kernel backs the watchdog up (bubblewrap)', () => {
  let fixture: SandboxFixture;
  beforeAll(async () => {
    fixture = await openSandbox('bubblewrap');
  });
  afterAll(() => fixture.close());

  it('caps the threads of the sandbox and the size of any file it writes (RLIMIT_NPROC, RLIMIT_FSIZE)', async () => {
    const output = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', "grep -E '^Max (processes|file size)' /proc/self/limits"],
      stdout: output.sink,
      limits: { processes: 50, diskBytes: 64 * MiB },
    });
    expect(result.exitCode).toBe(0);
    const limits = output.text().replace(/ +/g, ' ');
    expect(limits).toContain(`Max file size ${64 * MiB} ${64 * MiB} bytes`);
    expect(limits).toContain(
      `Max processes ${50 * THREADS_PER_PROCESS} ${50 * THREADS_PER_PROCESS} processes`,
    );
  });

  it('stops one file at the disk limit, even between two samples of the watchdog', async () => {
    const output = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', 'head -c 67108864 /dev/zero > big; echo "exit=$?"'],
      stdout: output.sink,
      limits: { diskBytes: 16 * MiB, wallClockSeconds: 60 },
    });
    // The writer died of SIGXFSZ (128 + 25); the file holds exactly the limit.
    if (result.limitExceeded === null) expect(output.text()).toBe('exit=153\n');
    else expect(result.limitExceeded).toBe('disk');
    expect(statSync(join(fixture.workspace, 'big')).size).toBe(16 * MiB);
  });

  it('refuses forks past the kernel limit, and records the run as over its process limit', async () => {
    const output = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      // Threads, not processes: the watchdog's process count stays low, the kernel's count reaches its limit.
      args: [
        '-c',
        'python3 -c "\nimport threading, time\nthreads = []\ntry:\n    for index in range(400):\n' +
          '        thread = threading.Thread(target=time.sleep, args=(1000,), daemon=True)\n' +
          '        thread.start()\n        threads.append(thread)\nexcept RuntimeError as error:\n' +
          "    print('refused after', len(threads), flush=True)\ntime.sleep(1000)\n\"",
      ],
      stdout: output.sink,
      limits: { processes: 16, wallClockSeconds: 60 },
    });
    expect(result.limitExceeded).toBe('processes');
    expect(result.peakProcesses).toBeLessThan(16);
    // What the script saw, unless the watchdog was faster than its print.
    expect(output.text()).toMatch(/^(refused after \d+\n)?$/);
  });
});

describe('sandbox limits: defaults a research round can live with', () => {
  it('limits processes and disk always, and CPU to half the cores over the wall-clock limit', () => {
    expect(withDefaultLimits({})).toEqual({
      processes: DEFAULT_PROCESS_LIMIT,
      diskBytes: DEFAULT_DISK_BYTES,
    });
    expect(withDefaultLimits({ wallClockSeconds: 600 }).cpuSeconds).toBe(defaultCpuSeconds(600));
    expect(defaultCpuSeconds(600)).toBe(600 * Math.max(1, Math.floor(availableParallelism() / 2)));
    expect(withDefaultLimits({ wallClockSeconds: 600, cpuSeconds: 5, processes: 7 })).toMatchObject({
      cpuSeconds: 5,
      processes: 7,
    });
  });
});
