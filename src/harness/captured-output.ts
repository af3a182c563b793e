import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

import { z } from 'zod';

/** What became of one output stream of the harness: how much came, how much was kept, what was cut. */
export const CapturedOutput = z.object({
  receivedBytes: z.number().int().nonnegative(),
  keptBytes: z.number().int().nonnegative(),
  /** Lines longer than the line limit, kept only up to it. */
  cutLines: z.number().int().nonnegative(),
  /** The file reached its size limit: what came after was dropped. */
  truncated: z.boolean(),
});
export type CapturedOutput = z.infer<typeof CapturedOutput>;

export interface CaptureLimits {
  maxLineBytes: number;
  maxFileBytes: number;
}

const NEWLINE = 0x0a;

/**
 * A host file written by this process from a pipe of the sandboxed harness. The harness never holds the file: agent
 * code that reaches the harness's output through `/proc/<pid>/fd/1` finds a pipe, which it can write into (appending,
 * as any line the harness prints) but not truncate, seek in or grow without bound. Lines are cut at the line limit
 * and the file stops at its size limit; the pipe is read to its end either way, so that the harness never blocks
 * on it. Writes are synchronous: nothing queues in memory.
 */
export class CapturedOutputFile {
  private readonly fd: number;
  private lineBytes = 0;
  private cutting = false;
  private closed = false;
  private readonly stats: CapturedOutput = { receivedBytes: 0, keptBytes: 0, cutLines: 0, truncated: false };

  constructor(
    readonly file: string,
    private readonly limits: CaptureLimits,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.fd = openSync(file, 'w');
  }

  /** For `SandboxCommand.stdout` and `stderr`. */
  readonly sink = { onData: (chunk: Buffer): void => this.write(chunk) };

  write(chunk: Buffer): void {
    if (this.closed) return;
    this.stats.receivedBytes += chunk.length;
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.keepLinePart(chunk.subarray(start, end));
      if (newline === -1) break;
      this.keep(chunk.subarray(newline, newline + 1));
      this.lineBytes = 0;
      this.cutting = false;
      start = newline + 1;
    }
  }

  /** Closes the file; what came and what was kept. */
  close(): CapturedOutput {
    if (!this.closed) closeSync(this.fd);
    this.closed = true;
    return { ...this.stats };
  }

  private keepLinePart(part: Buffer): void {
    if (this.cutting || part.length === 0) return;
    const room = this.limits.maxLineBytes - this.lineBytes;
    if (part.length > room) {
      this.cutting = true;
      this.stats.cutLines++;
    }
    const kept = part.subarray(0, Math.max(0, room));
    this.lineBytes += kept.length;
    this.keep(kept);
  }

  private keep(bytes: Buffer): void {
    if (this.stats.truncated || bytes.length === 0) return;
    const room = this.limits.maxFileBytes - this.stats.keptBytes;
    const kept = bytes.subarray(0, Math.max(0, room));
    if (kept.length < bytes.length) this.stats.truncated = true;
    let written = 0;
    while (written < kept.length) written += writeSync(this.fd, kept, written, kept.length - written);
    this.stats.keptBytes += kept.length;
  }
}
