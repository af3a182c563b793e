import { mkdirSync, openSync } from 'node:fs';
import { close, write } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Appends one JSON line per record to a file, one record at a time, each written in full before the next
 * starts: rows are never torn or interleaved, however many requests are in flight.
 */
export class JsonlAppender {
  private readonly fd: number;
  private tail: Promise<void> = Promise.resolve();
  private failure: Error | null = null;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  append(line: string): Promise<void> {
    const buffer = Buffer.from(line.endsWith('\n') ? line : `${line}\n`);
    this.tail = this.tail
      .then(() => writeAll(this.fd, buffer))
      .catch((error: unknown) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
      });
    return this.tail;
  }

  /** The first write error, if any (a full disk, say): the caller decides how loudly to fail. */
  get error(): Error | null {
    return this.failure;
  }

  async close(): Promise<void> {
    await this.tail;
    await new Promise<void>((resolve, reject) =>
      close(this.fd, (error) => (error ? reject(error) : resolve())),
    );
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
