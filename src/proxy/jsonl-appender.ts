import { close, mkdirSync, openSync, write } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Appends one JSON line per record to a file. Lines are queued and written by one writer at a time, those queued
 * during a write going out together in the next: a line is never torn or interleaved with another, however many
 * requests are in flight, and a busy proxy makes few system calls.
 */
export class JsonlAppender {
  private readonly fd: number;
  private queued: Buffer[] = [];
  private waiters: Array<() => void> = [];
  private writing: Promise<void> | null = null;
  private failure: Error | null = null;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  /** Resolves once the line is written to the file (handed to the operating system). */
  append(line: string): Promise<void> {
    this.queued.push(Buffer.from(line.endsWith('\n') ? line : `${line}\n`));
    const written = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.writing ??= this.drain();
    return written;
  }

  /** The first write error, if any (a full disk, say): the caller decides how loudly to fail. */
  get error(): Error | null {
    return this.failure;
  }

  async close(): Promise<void> {
    await this.writing;
    await new Promise<void>((resolve, reject) =>
      close(this.fd, (error) => (error ? reject(error) : resolve())),
    );
  }

  private async drain(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = Buffer.concat(this.queued);
      const waiters = this.waiters;
      this.queued = [];
      this.waiters = [];
      try {
        await writeAll(this.fd, batch);
      } catch (error) {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      }
      for (const resolve of waiters) resolve();
    }
    this.writing = null;
  }
}

async function writeAll(fd: number, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    offset += await new Promise<number>((resolve, reject) =>
      write(fd, buffer, offset, buffer.length - offset, null, (error, written) =>
        error ? reject(error) : resolve(written),
      ),
    );
  }
}
