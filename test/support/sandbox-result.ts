import type { SandboxResult } from '../../src/episode/sandbox-run.js';

/** A sandboxed command's result as a stand-in environment returns it: exit 0 within every limit, unless `changes` say otherwise. */
export function sandboxResult(changes: Partial<SandboxResult> = {}): SandboxResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    limitExceeded: null,
    aborted: false,
    sandboxed: true,
    startedAt: '2026-01-01T00:00:00.000Z',
    wallSeconds: 0.5,
    cpuSeconds: 0,
    peakMemoryBytes: 0,
    peakProcesses: 1,
    peakDiskBytes: 0,
    ...changes,
  };
}
