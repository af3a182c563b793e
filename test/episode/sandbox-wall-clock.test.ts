import { describe, expect, it } from 'vitest';

import { ResourceWatchdog, type SandboxLimitName } from '../../src/episode/sandbox-limits.js';

/** A watchdog over this test's own process (read from /proc, nothing started), stopped after `waitMs`. */
async function exceededWithin(wallClockSeconds: number, waitMs: number): Promise<SandboxLimitName[]> {
  const exceeded: SandboxLimitName[] = [];
  const watchdog = new ResourceWatchdog({
    rootPid: process.pid,
    limits: { wallClockSeconds },
    sampleIntervalMs: 1000,
    diskDirectories: [],
    onLimitExceeded: (limit) => exceeded.push(limit),
  });
  watchdog.start();
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  watchdog.stop();
  return exceeded;
}

// A wall-clock limit reaches the watchdog from a queued job or a computed sum as well as from a checked field: one
// past the timer's range waits as long as a timer can (24.8 days) instead of firing at once.
describe("the sandbox's wall-clock limit", () => {
  it('does not fire at once for a limit past the timer range', async () => {
    expect(await exceededWithin(3_000_000, 60)).toEqual([]);
    expect(await exceededWithin(Infinity, 20)).toEqual([]);
  });

  it('still fires when its time is up', async () => {
    expect(await exceededWithin(0.02, 200)).toEqual(['wall-clock']);
  });
});
