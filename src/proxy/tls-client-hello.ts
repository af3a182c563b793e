/**
 * The first bytes of a TLS connection read as a ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2), for the server name
 * it asks for (the `server_name` extension, RFC 6066 §3). The egress proxy binds a `CONNECT` tunnel to its host with
 * it: what goes through a tunnel must be TLS, to the server the tunnel named. Pure: bytes in, a verdict out.
 *
 * The handshake message may be split over several TLS records, and the records over several reads: until the whole
 * message has arrived the answer is `incomplete`, and the caller bounds how long and how much it waits for. Each byte
 * is looked at once, however it is split: agent code sending a byte at a time costs the proxy no more than one read.
 */
export type ClientHelloRead =
  | { status: 'incomplete' }
  /** `serverName`: lowercase, without a trailing dot; null when the hello names no server. */
  | { status: 'hello'; serverName: string | null }
  | { status: 'invalid'; reason: string };

const RECORD_HEADER_BYTES = 5;
const HANDSHAKE_HEADER_BYTES = 4;
const CONTENT_TYPE_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
/** The largest plaintext fragment a record may carry (RFC 8446 §5.1). */
const MAX_FRAGMENT_BYTES = 2 ** 14;
const EXTENSION_SERVER_NAME = 0;
const NAME_TYPE_HOST_NAME = 0;
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$/i;
const INCOMPLETE: ClientHelloRead = { status: 'incomplete' };

/** Reads the ClientHello at the start of `bytes`, all that has arrived of it (see `ClientHelloReader`). */
export function readClientHello(bytes: Uint8Array, maxBytes: number): ClientHelloRead {
  return new ClientHelloReader(maxBytes).push(bytes);
}

/**
 * Reads a ClientHello as its bytes arrive, `push` by `push`, until it decides; then every further `push` returns the
 * same decision. A handshake message longer than `maxBytes` is `invalid` as soon as its header says so.
 */
export class ClientHelloReader {
  private decision: ClientHelloRead = INCOMPLETE;
  /** The current record's header while it arrives. */
  private readonly recordHeader = new Uint8Array(RECORD_HEADER_BYTES);
  private recordHeaderBytes = 0;
  /** What is left of the current record's fragment. */
  private recordRemaining = 0;
  /** The handshake message's header while it arrives, then the whole message, sized by it. */
  private message = new Uint8Array(HANDSHAKE_HEADER_BYTES);
  private messageFilled = 0;
  private messageBytes: number | null = null;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Uint8Array): ClientHelloRead {
    let position = 0;
    while (this.decision.status === 'incomplete' && position < chunk.length) {
      if (this.recordRemaining === 0) {
        this.recordHeader[this.recordHeaderBytes++] = chunk[position]!;
        const start = checkRecordStart(
          this.recordHeader.subarray(0, this.recordHeaderBytes),
          chunk.subarray(position),
        );
        position++;
        if (start.status === 'invalid') return (this.decision = start);
        if (this.recordHeaderBytes < RECORD_HEADER_BYTES) continue;
        this.recordHeaderBytes = 0;
        this.recordRemaining = (this.recordHeader[3]! << 8) | this.recordHeader[4]!;
        if (this.recordRemaining === 0 || this.recordRemaining > MAX_FRAGMENT_BYTES) {
          const length = this.recordRemaining;
          return (this.decision = invalid(
            `a TLS record of ${length} bytes (a record holds 1 to ${MAX_FRAGMENT_BYTES})`,
          ));
        }
        continue;
      }
      const take = Math.min(this.recordRemaining, chunk.length - position);
      this.recordRemaining -= take;
      this.fragment(chunk.subarray(position, position + take));
      position += take;
    }
    return this.decision;
  }

  /** Bytes of a handshake record's fragment: the message's header, then its body (what follows it is not read). */
  private fragment(bytes: Uint8Array): void {
    let position = 0;
    if (this.messageBytes === null) {
      const take = Math.min(HANDSHAKE_HEADER_BYTES - this.messageFilled, bytes.length);
      this.message.set(bytes.subarray(0, take), this.messageFilled);
      this.messageFilled += take;
      position = take;
      if (this.messageFilled < HANDSHAKE_HEADER_BYTES) return;
      const head = this.message;
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) {
        this.decision = invalid(`a TLS handshake of type ${head[0]}, not a ClientHello`);
        return;
      }
      // The message's own header decides, as soon as it is here, whether the rest is worth waiting for.
      this.messageBytes = HANDSHAKE_HEADER_BYTES + ((head[1]! << 16) | (head[2]! << 8) | head[3]!);
      if (this.messageBytes > this.maxBytes) {
        const announced = this.messageBytes;
        this.decision = invalid(
          `a ClientHello of ${announced} bytes, more than the ${this.maxBytes} the proxy reads`,
        );
        return;
      }
      const whole = new Uint8Array(this.messageBytes);
      whole.set(head);
      this.message = whole;
    }
    const take = Math.min(this.messageBytes - this.messageFilled, bytes.length - position);
    this.message.set(bytes.subarray(position, position + take), this.messageFilled);
    this.messageFilled += take;
    if (this.messageFilled === this.messageBytes) {
      this.decision = parseClientHelloBody(this.message.subarray(HANDSHAKE_HEADER_BYTES));
    }
  }
}

/**
 * A record's header as far as it has arrived: a handshake record of TLS 1.0 to 1.3's framing. `following`: the bytes
 * from the one just added on, to show what came instead of TLS.
 */
function checkRecordStart(header: Uint8Array, following: Uint8Array): ClientHelloRead {
  if (header[0] !== CONTENT_TYPE_HANDSHAKE) {
    return invalid(
      `not TLS: the first byte is 0x${header[0]!.toString(16).padStart(2, '0')} ${printable(following)}`,
    );
  }
  if (header.length >= 2 && header[1] !== 3) return invalid('not TLS: the record version is not 3.x');
  if (header.length >= 3 && header[2]! > 4) return invalid(`not TLS: the record version is 3.${header[2]}`);
  return INCOMPLETE;
}

function parseClientHelloBody(body: Uint8Array): ClientHelloRead {
  const reader = new Reader(body);
  reader.skip(2 + 32); // legacy_version, random
  reader.skip(reader.vector(1, 32)); // legacy_session_id
  const cipherSuites = reader.vector(2, 2 ** 16 - 2);
  if (reader.failed) return invalid('a ClientHello cut short');
  if (cipherSuites === 0 || cipherSuites % 2 !== 0)
    return invalid('a ClientHello without a valid cipher suite list');
  reader.skip(cipherSuites);
  const compression = reader.vector(1, 255);
  if (compression === 0) return invalid('a ClientHello without compression methods');
  reader.skip(compression);
  if (reader.failed) return invalid('a ClientHello cut short');
  if (reader.remaining === 0) return { status: 'hello', serverName: null };
  const extensionsBytes = reader.vector(2, 2 ** 16 - 1);
  const extensionsEnd = reader.position + extensionsBytes;
  if (reader.failed || extensionsEnd !== body.length)
    return invalid('a ClientHello whose extensions do not add up');
  const seen = new Set<number>();
  let serverName: string | null = null;
  while (reader.position < extensionsEnd) {
    const type = reader.uint(2);
    const length = reader.vector(2, 2 ** 16 - 1);
    if (reader.failed || reader.position + length > extensionsEnd)
      return invalid('a ClientHello extension cut short');
    if (seen.has(type)) return invalid(`a ClientHello with extension ${type} twice`);
    seen.add(type);
    if (type === EXTENSION_SERVER_NAME) {
      const parsed = parseServerName(body.subarray(reader.position, reader.position + length));
      if (typeof parsed !== 'string' && parsed !== null) return parsed;
      serverName = parsed;
    }
    reader.skip(length);
  }
  return { status: 'hello', serverName };
}

/** The host_name of a `server_name` extension's data (RFC 6066 §3): one name at most, an ASCII host name. */
function parseServerName(data: Uint8Array): string | null | ClientHelloRead {
  const reader = new Reader(data);
  const listBytes = reader.vector(2, 2 ** 16 - 1);
  const listEnd = reader.position + listBytes;
  if (reader.failed || listEnd !== data.length)
    return invalid('a server_name extension whose list does not add up');
  let hostName: string | null = null;
  while (reader.position < listEnd) {
    const nameType = reader.uint(1);
    const length = reader.vector(2, 2 ** 16 - 1);
    if (reader.failed || reader.position + length > listEnd)
      return invalid('a server_name extension cut short');
    if (nameType === NAME_TYPE_HOST_NAME) {
      if (hostName !== null) return invalid('a server_name extension with two host names');
      const text = Buffer.from(data.subarray(reader.position, reader.position + length)).toString('latin1');
      if (length === 0 || length > 255 || !HOST_NAME.test(text)) {
        return invalid(`a server name that is not a host name ${printable(data.subarray(reader.position))}`);
      }
      hostName = text.toLowerCase().replace(/\.$/, '');
    }
    reader.skip(length);
  }
  if (hostName === null) return invalid('a server_name extension without a host name');
  return hostName;
}

/** Big-endian fields of a TLS structure; a read past the end sets `failed` instead of throwing. */
class Reader {
  position = 0;
  failed = false;

  constructor(private readonly bytes: Uint8Array) {}

  get remaining(): number {
    return this.bytes.length - this.position;
  }

  uint(width: 1 | 2): number {
    if (this.remaining < width) {
      this.failed = true;
      this.position = this.bytes.length;
      return 0;
    }
    let value = 0;
    for (let index = 0; index < width; index++) value = (value << 8) | this.bytes[this.position++]!;
    return value;
  }

  /** A vector's length prefix, checked against its bound and what is left. */
  vector(width: 1 | 2, max: number): number {
    const length = this.uint(width);
    if (length > max || length > this.remaining) this.failed = true;
    return this.failed ? 0 : length;
  }

  skip(count: number): void {
    if (count > this.remaining) this.failed = true;
    this.position = Math.min(this.bytes.length, this.position + count);
  }
}

function invalid(reason: string): ClientHelloRead {
  return { status: 'invalid', reason };
}

/** Up to 24 of the bytes as printable text, for a reason that shows what came instead (`("GET / HTTP/1.1")`). */
function printable(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.subarray(0, 24))
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return `("${text.replace(/"/g, "'")}")`;
}
