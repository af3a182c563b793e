import { open } from 'node:fs/promises';

/**
 * Reads a text file of a run line by line within fixed limits, so that what a reader costs does not grow with what
 * agents could write into the file: a proxy log holds every request body a team sent (one of 420 MB took the viewer
 * from 108 MB to 1.34 GB when it was read whole), and a harness's output can hold a gigabyte-long line of NULs (it
 * made `readline` throw). The file is streamed in pieces; a line longer than `maxLineBytes` is passed over without
 * being held; reading stops at the first line end past `maxBytes`. The one line reader of every such file.
 */
export interface LineLimits {
  maxLineBytes: number;
  /** Default: the whole file. */
  maxBytes?: number;
}

export interface LinesRead {
  /** The file's size when it was opened. */
  fileBytes: number;
  /** Bytes read, up to the end of the last line handed on. */
  bytesRead: number;
  /** Reading stopped at `maxBytes`, before the end of the file. */
  stoppedEarly: boolean;
  /** Line numbers (from 1) of the lines over `maxLineBytes`, passed over. */
  longLines: number[];
  /** The file ends inside a line (being appended, or cut off): that line is not handed on. */
  unfinishedLastLine: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Calls `onLine` with each whole line (without its newline) and its number; `onLine` returns false to stop. Undefined
 * when the file does not exist.
 */
export async function readLines(
  file: string,
  limits: LineLimits,
  onLine: (line: string, number: number) => boolean | void,
): Promise<LinesRead | undefined> {
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const result: LinesRead = {
      fileBytes: (await handle.stat()).size,
      bytesRead: 0,
      stoppedEarly: false,
      longLines: [],
      unfinishedLastLine: false,
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let skipping = false;
    let number = 0;
    let position = 0;
    const buffer = Buffer.alloc(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (;;) {
        const end = chunk.indexOf(NEWLINE, start);
        const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
        if (!skipping && pendingBytes + piece.length > limits.maxLineBytes) {
          skipping = true;
          pending = [];
          pendingBytes = 0;
        }
        if (!skipping) {
          // Copied: the buffer is read into again.
          pending.push(Buffer.from(piece));
          pendingBytes += piece.length;
        }
        if (end === -1) break;
        number++;
        result.bytesRead = position + end + 1;
        start = end + 1;
        if (skipping) result.longLines.push(number);
        else if (onLine(Buffer.concat(pending, pendingBytes).toString('utf8'), number) === false)
          return result;
        pending = [];
        pendingBytes = 0;
        skipping = false;
        if (result.bytesRead >= maxBytes) {
          result.stoppedEarly = result.bytesRead < result.fileBytes;
          return result;
        }
      }
      position += bytesRead;
    }
    result.unfinishedLastLine = skipping || pending.some((piece) => piece.toString('utf8').trim() !== '');
    return result;
  } finally {
    await handle.close();
  }
}
