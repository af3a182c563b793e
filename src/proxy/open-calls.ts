import { rm, rename, writeFile } from 'node:fs/promises';

import { temporaryPathFor } from '../store/atomic-write.js';

/** One call the proxy has begun and not yet written a row for. */
export interface OpenCall {
  seq: number;
  startedAt: string;
  method: string;
  path: string;
}

/**
 * The calls in flight beside a proxy log: `requests-open.json` next to `requests.jsonl`, rewritten (coalesced, at most
 * one write at a time) as calls begin and end, removed when the proxy closes. It is what `mass status` shows as an
 * episode's current model call; a file left by a killed proxy names calls that will never end, and `mass status`
 * tells that from the run's liveness. A status hint only: no fsync, and a failed write is dropped. The judge's and
 * optimizer's calls in flight use the same file with their own fields (`src/judge/open-model-calls.ts`).
 */
export class OpenCallsFile<Call extends { seq: number } = OpenCall> {
  private readonly open = new Map<number, Call>();
  private writing: Promise<void> | null = null;
  private dirty = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly writer: string,
  ) {}

  begin(call: Call): void {
    this.open.set(call.seq, call);
    this.schedule();
  }

  end(seq: number): void {
    if (this.open.delete(seq)) this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.writing;
    await rm(this.path, { force: true });
  }

  private schedule(): void {
    this.dirty = true;
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    while (this.dirty && !this.closed) {
      this.dirty = false;
      const body = JSON.stringify({ writer: this.writer, calls: [...this.open.values()] });
      const temporary = temporaryPathFor(this.path);
      try {
        await writeFile(temporary, body);
        await rename(temporary, this.path);
      } catch {
        await rm(temporary, { force: true }).catch(() => {});
      }
    }
    this.writing = null;
  }
}

/** The open-calls file beside a proxy log: `requests.jsonl` → `requests-open.json`. */
export function openCallsPath(logFile: string): string {
  return `${logFile.replace(/\.jsonl$/, '')}-open.json`;
}
