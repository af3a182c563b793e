import { createWriteStream, type WriteStream } from 'node:fs';

/** Appends JSON lines to a file in large writes, waiting when the stream's buffer is full. */
export class JsonLinesWriter {
  private readonly stream: WriteStream;
  private pending: string[] = [];
  private pendingLength = 0;
  private failure: Error | undefined;

  constructor(
    readonly path: string,
    private readonly flushCharacters = 1 << 20,
  ) {
    this.stream = createWriteStream(path, { flags: 'w' });
    this.stream.on('error', (error) => (this.failure = error));
  }

  async write(value: unknown): Promise<void> {
    const line = `${JSON.stringify(value)}\n`;
    this.pending.push(line);
    this.pendingLength += line.length;
    if (this.pendingLength >= this.flushCharacters) await this.flush();
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) =>
      this.stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    if (this.failure) throw this.failure;
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingLength = 0;
    if (!this.stream.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        this.stream.once('error', onError);
        this.stream.once('drain', () => {
          this.stream.off('error', onError);
          resolve();
        });
      });
    }
  }
}
