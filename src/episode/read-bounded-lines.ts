import { open } from 'node:fs/promises';

export interface LineLimits {
  /** A longer line is skipped whole (counted, never held in memory). */
  maxLineBytes: number;
  /** Reading stops here; default: the whole file. */
  maxFileBytes?: number;
}

export interface LinesRead {
  /** Lines handed on. */
  lines: number;
  /** Lines over the line limit, or cut by the end of what was read: skipped. */
  overlongLines: number;
  /** The file was longer than the size limit: the rest was not read. */
  truncated: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Reads a text file one line at a time, each line at most `maxLineBytes`, in fixed chunks: whatever is in the file
 * (a line of a gigabyte, a sparse hole of NULs, no newline at all), memory stays bounded and no string grows past
 * what the limits allow. For files that hold what came from inside a sandbox, or that agents could lengthen.
 */
export async function readBoundedLines(
  file: string,
  limits: LineLimits,
  onLine: (line: string) => void,
): Promise<LinesRead> {
  const result: LinesRead = { lines: 0, overlongLines: 0, truncated: false };
  const maxFileBytes = limits.maxFileBytes ?? Number.POSITIVE_INFINITY;
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let parts: Buffer[] = [];
    let lineBytes = 0;
    let skipping = false;
    let position = 0;
    const endLine = (): void => {
      if (skipping) result.overlongLines++;
      else {
        result.lines++;
        onLine(Buffer.concat(parts, lineBytes).toString('utf8'));
      }
      parts = [];
      lineBytes = 0;
      skipping = false;
    };
    for (;;) {
      const want = Math.min(CHUNK_BYTES, maxFileBytes - position);
      if (want <= 0) {
        const { bytesRead } = await handle.read(buffer, 0, 1, position);
        result.truncated = bytesRead > 0;
        if (result.truncated && (lineBytes > 0 || skipping)) {
          // A line the limit cut: not a whole line.
          skipping = true;
          endLine();
        } else if (lineBytes > 0) endLine();
        break;
      }
      const { bytesRead } = await handle.read(buffer, 0, want, position);
      if (bytesRead === 0) {
        if (lineBytes > 0 || skipping) endLine();
        break;
      }
      position += bytesRead;
      let start = 0;
      while (start < bytesRead) {
        const newline = buffer.indexOf(NEWLINE, start);
        const end = newline === -1 || newline >= bytesRead ? bytesRead : newline;
        if (!skipping) {
          if (lineBytes + (end - start) > limits.maxLineBytes) {
            skipping = true;
            parts = [];
            lineBytes = 0;
          } else if (end > start) {
            parts.push(Buffer.from(buffer.subarray(start, end)));
            lineBytes += end - start;
          }
        }
        if (end === bytesRead) break;
        endLine();
        start = end + 1;
      }
    }
  } finally {
    await handle.close();
  }
  return result;
}
