/**
 * The entries of a tar stream (ustar, with PAX and GNU long names and base-256 sizes: what a container engine's `cp`
 * writes), read one at a time so that nothing of it need be held or written: each entry's data is consumed or skipped
 * before the next header is read. The stream is the engine's, but every name, size and byte in it came from a
 * trial's files: names stay bytes, and sizes are only trusted as far as the bytes that really come.
 */

const BLOCK = 512;

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'fifo' | 'device' | 'other';

export interface TarEntry {
  /** The entry's path in the archive, as bytes (`/`-separated). */
  name: Buffer;
  type: TarEntryType;
  mode: number;
  size: number;
  /** A link's target, as bytes; empty for other entries. */
  linkName: Buffer;
}

/** Thrown by a `ChunkReader` asked for more than its limit: the rest of the stream is never read. */
export class StreamLimitReached extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes came`);
  }
}

/** Reads exactly the bytes asked for from an async stream of chunks, at most `limit` bytes in all. */
export class ChunkReader {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  /** Every byte taken from the stream so far. */
  consumed = 0;
  private readonly iterator: AsyncIterator<Buffer>;

  constructor(
    source: AsyncIterable<Buffer>,
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** At most `n` bytes, fewer only at the end of the stream (none: an empty buffer). */
  async take(n: number): Promise<Buffer> {
    if (this.consumed + n > this.limit) throw new StreamLimitReached(this.limit);
    while (this.bufferedBytes < n) {
      const next = await this.iterator.next();
      if (next.done) break;
      this.buffered.push(next.value);
      this.bufferedBytes += next.value.length;
    }
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const taken = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(taken.length);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedBytes = rest.length;
    this.consumed += taken.length;
    return taken;
  }

  /**
   * Throws `StreamLimitReached` now when `n` more bytes would pass the limit: an entry whose data cannot fit is never
   * read at all (skipping it would cost reading up to the limit: 9 GiB of a sparse file's zeros, minutes of the host's
   * time, for the same result).
   */
  ensureRoom(n: number): void {
    if (this.consumed + n > this.limit) throw new StreamLimitReached(this.limit);
  }

  /** Reads the stream to its end, within the limit (past it: `StreamLimitReached`), keeping nothing. */
  async drain(): Promise<void> {
    for (;;) {
      const room = this.limit - this.consumed;
      const chunk = await this.take(room > 0 ? Math.min(64 * 1024, room) : 1);
      if (chunk.length === 0) return;
      this.buffered = [];
      this.bufferedBytes = 0;
    }
  }

  /** Exactly `n` bytes, or an error naming what was being read. */
  async exactly(n: number, what: string): Promise<Buffer> {
    const bytes = await this.take(n);
    if (bytes.length !== n) throw new Error(`the archive ended inside ${what}`);
    return bytes;
  }
}

/**
 * Each entry of the archive with a function that passes its data, chunk by chunk, to `sink` (or, without one, skips
 * it); the data not taken before the next entry is asked for is skipped then. The padding after each entry is read
 * here. Ends at the archive's end block or the stream's end.
 */
export async function* tarEntries(
  reader: ChunkReader,
): AsyncGenerator<{ entry: TarEntry; data: (sink?: (chunk: Buffer) => Promise<void>) => Promise<void> }> {
  let pax: Map<string, Buffer> = new Map();
  let longName: Buffer | null = null;
  let longLink: Buffer | null = null;
  for (;;) {
    const header = await reader.take(BLOCK);
    if (header.length < BLOCK || header.every((byte) => byte === 0)) return;
    const typeflag = String.fromCharCode(header[156]!);
    const size = numeric(header.subarray(124, 136));
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x' || typeflag === 'g' || typeflag === 'L' || typeflag === 'K') {
      if (size > 1024 * 1024) throw new Error(`an extended header of ${size} bytes`);
      const body = (await reader.exactly(padded, 'an extended header')).subarray(0, size);
      if (typeflag === 'x') pax = paxRecords(body);
      if (typeflag === 'L') longName = cString(body);
      if (typeflag === 'K') longLink = cString(body);
      continue;
    }
    const ustar = header.subarray(257, 263).toString('latin1') === 'ustar\0';
    const prefix = ustar ? cString(header.subarray(345, 500)) : Buffer.alloc(0);
    const shortName = cString(header.subarray(0, 100));
    const name =
      pax.get('path') ??
      longName ??
      (prefix.length > 0 ? Buffer.concat([prefix, Buffer.from('/'), shortName]) : shortName);
    const entrySize = pax.has('size') ? Number(pax.get('size')!.toString('latin1')) : size;
    if (!Number.isSafeInteger(entrySize) || entrySize < 0) throw new Error('an entry of no valid size');
    const type = entryType(typeflag);
    // Links, folders and special files carry no data, whatever size their header claims.
    const dataBytes = type === 'file' || type === 'other' ? entrySize : 0;
    const entry: TarEntry = {
      name,
      type,
      mode: numeric(header.subarray(100, 108)) & 0o7777,
      size: dataBytes,
      linkName: pax.get('linkpath') ?? longLink ?? cString(header.subarray(157, 257)),
    };
    pax = new Map();
    longName = null;
    longLink = null;
    let remaining = Math.ceil(dataBytes / BLOCK) * BLOCK;
    let left = dataBytes;
    const pass = async (sink?: (chunk: Buffer) => Promise<void>): Promise<void> => {
      reader.ensureRoom(remaining);
      while (remaining > 0) {
        const chunk = await reader.take(Math.min(remaining, 1024 * 1024));
        if (chunk.length === 0) throw new Error('the archive ended inside an entry');
        remaining -= chunk.length;
        const useful = chunk.subarray(0, Math.min(chunk.length, left));
        left -= useful.length;
        if (sink && useful.length > 0) await sink(useful);
      }
    };
    yield { entry, data: pass };
    await pass();
  }
}

function entryType(typeflag: string): TarEntryType {
  switch (typeflag) {
    case '0':
    case '\0':
    case '7':
      return 'file';
    case '5':
      return 'directory';
    case '2':
      return 'symlink';
    case '1':
      return 'hardlink';
    case '6':
      return 'fifo';
    case '3':
    case '4':
      return 'device';
    default:
      return 'other';
  }
}

/** An octal field, or a base-256 one (its first byte's high bit set, as GNU tar and Go write sizes past 8 GiB). */
function numeric(field: Buffer): number {
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    if (!Number.isSafeInteger(value)) throw new Error('a number field past 2^53');
    return value;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`a number field that is not octal (${JSON.stringify(text)})`);
  return parseInt(text, 8);
}

/** The bytes before the first NUL. */
function cString(field: Buffer): Buffer {
  const end = field.indexOf(0);
  return Buffer.from(end === -1 ? field : field.subarray(0, end));
}

/** PAX records: `<length> <key>=<value>\n`, each value kept as bytes. */
function paxRecords(body: Buffer): Map<string, Buffer> {
  const records = new Map<string, Buffer>();
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number(body.subarray(offset, space).toString('latin1'));
    if (!Number.isSafeInteger(length) || length <= space - offset || offset + length > body.length) {
      throw new Error('a malformed PAX record');
    }
    const record = body.subarray(space + 1, offset + length - 1);
    const equals = record.indexOf(0x3d);
    if (equals !== -1)
      records.set(record.subarray(0, equals).toString('utf8'), Buffer.from(record.subarray(equals + 1)));
    offset += length;
  }
  return records;
}
