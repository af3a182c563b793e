import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { EntryPointRunner, EntryPointRunOutcome } from '../tasks/entry-point-rerun.js';
import { Sandbox, type SandboxMode, type SandboxResult } from './sandbox.js';
import { removeTree } from '../store/remove-tree.js';

/**
 * Runs a task's entry point again for grading (`tasks/entry-point-rerun.ts`), in a sandbox of its own: the team's code
 * is hostile. It sees the fresh copy at `/workspace` (the only folder it may write, as in its episode), the system, and
 * nothing else: no network at all (no model proxy either), not the suites nor this package's tests. Under a wall-clock
 * limit, memory and disk limits; only the end of its output is kept, for the reason of a failure.
 */

interface EntryPointSandboxOptions {
  /** As the episode ran: `unsandboxed` only where bubblewrap cannot run (then nothing is isolated). */
  mode: SandboxMode;
  memoryBytes?: number;
  diskBytes?: number;
  /** Where the unsandboxed-mode warning goes; default standard error. */
  warn?: (message: string) => void;
}

/** Far above what a research task's analysis needs; far below what would starve the episodes beside it. */
const RERUN_MEMORY_BYTES = 8 * 1024 ** 3;
const RERUN_DISK_BYTES = 8 * 1024 ** 3;
/** How much of the end of its output a failure's reason quotes. */
const OUTPUT_TAIL_CHARACTERS = 600;

const PACKAGE_FOLDERS_WITH_ANSWERS = ['suites', 'benchmarks', 'test'].map((folder) =>
  fileURLToPath(new URL(`../../${folder}`, import.meta.url)),
);

/** Single-threaded maths and a headless matplotlib, as the grader's own Python runs; nothing of this process's environment. */
const RERUN_ENVIRONMENT: Record<string, string> = {
  MPLBACKEND: 'Agg',
  PYTHONDONTWRITEBYTECODE: '1',
  OMP_NUM_THREADS: '1',
  OPENBLAS_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
};

export function sandboxedEntryPointRunner(options: EntryPointSandboxOptions): EntryPointRunner {
  return async ({ folder, command, timeoutSeconds, hiddenDirectories }) => {
    const state = await mkdtemp(join(tmpdir(), 'mass-rerun-'));
    try {
      const sandbox = await Sandbox.open({
        mode: options.mode,
        workspace: folder,
        stateDirectory: state,
        // Besides the task's suite, the package's own suites and tests: they hold every task's grader.
        hiddenDirectories: [...PACKAGE_FOLDERS_WITH_ANSWERS, ...hiddenDirectories],
        ...(options.warn ? { warn: options.warn } : {}),
      });
      const tail = new OutputTail(OUTPUT_TAIL_CHARACTERS * 4);
      try {
        const result = await sandbox.run({
          command: '/bin/sh',
          args: ['-c', command],
          env: RERUN_ENVIRONMENT,
          stdout: { onData: (chunk) => tail.add(chunk) },
          stderr: { onData: (chunk) => tail.add(chunk) },
          limits: {
            wallClockSeconds: timeoutSeconds,
            memoryBytes: options.memoryBytes ?? RERUN_MEMORY_BYTES,
            diskBytes: options.diskBytes ?? RERUN_DISK_BYTES,
          },
        });
        return rerunOutcome(result, timeoutSeconds, tail.text());
      } finally {
        await sandbox.close();
      }
    } finally {
      // Its home is the rerun's to write: a tree past PATH_MAX there must not fail the rerun's outcome.
      await removeTree(state);
    }
  };
}

/** Success is exit 0 within every limit; a failure says which, with the end of the output (printable characters only). */
export function rerunOutcome(
  result: SandboxResult,
  timeoutSeconds: number,
  output: string,
): EntryPointRunOutcome {
  if (result.exitCode === 0 && result.limitExceeded === null && !result.aborted)
    return { ok: true, reason: '' };
  const why =
    result.limitExceeded === 'wall-clock'
      ? `timed out after ${timeoutSeconds} s`
      : result.limitExceeded !== null
        ? `stopped at its ${result.limitExceeded} limit`
        : `exited with ${result.exitCode ?? result.signal ?? 'no status'}`;
  const printable = output.replace(/[^\P{C}\n\t]/gu, '?').trim();
  const end =
    printable.length > OUTPUT_TAIL_CHARACTERS ? `…${printable.slice(-OUTPUT_TAIL_CHARACTERS)}` : printable;
  return { ok: false, reason: end === '' ? why : `${why}; its output ended: ${end}` };
}

/** Keeps the last `limit` bytes written to it, however much is written. */
class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.limit) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
}
