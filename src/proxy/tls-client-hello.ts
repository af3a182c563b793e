/**
 * The first bytes of a TLS connection read as a ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2), for the server name
 * it asks for (the `server_name` extension, RFC 6066 §3). The egress proxy binds a `CONNECT` tunnel to its host with
 * it: what goes through a tunnel must be TLS, to the server the tunnel named. Pure: bytes in, a verdict out.
 *
 * The handshake message may be split over several TLS records, and the records over several reads: until the whole
 * message has arrived the answer is `incomplete`, and the caller bounds how long and how much it waits for.
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

/**
 * Reads the ClientHello at the start of `bytes` (everything the client sent so far). A handshake message longer than
 * `maxBytes` is `invalid` at once, without waiting for the rest.
 */
export function readClientHello(bytes: Uint8Array, maxBytes: number): ClientHelloRead {
  const fragments: Uint8Array[] = [];
  let fragmentBytes = 0;
  let offset = 0;
  let messageBytes: number | null = null;
  while (messageBytes === null || fragmentBytes < messageBytes) {
    if (bytes.length - offset < RECORD_HEADER_BYTES) {
      return bytes.length > offset ? checkRecordStart(bytes.subarray(offset)) : { status: 'incomplete' };
    }
    const start = checkRecordStart(bytes.subarray(offset));
    if (start.status === 'invalid') return start;
    const length = (bytes[offset + 3]! << 8) | bytes[offset + 4]!;
    if (length === 0 || length > MAX_FRAGMENT_BYTES) {
      return invalid(`a TLS record of ${length} bytes (a record holds 1 to ${MAX_FRAGMENT_BYTES})`);
    }
    const available = Math.min(length, bytes.length - offset - RECORD_HEADER_BYTES);
    fragments.push(bytes.subarray(offset + RECORD_HEADER_BYTES, offset + RECORD_HEADER_BYTES + available));
    fragmentBytes += available;
    // The message's own header decides, as soon as it is here, whether the rest is worth waiting for.
    if (messageBytes === null && fragmentBytes >= HANDSHAKE_HEADER_BYTES) {
      const head = concat(fragments, HANDSHAKE_HEADER_BYTES);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO)
        return invalid(`a TLS handshake of type ${head[0]}, not a ClientHello`);
      messageBytes = HANDSHAKE_HEADER_BYTES + ((head[1]! << 16) | (head[2]! << 8) | head[3]!);
      if (messageBytes > maxBytes) {
        return invalid(`a ClientHello of ${messageBytes} bytes, more than the ${maxBytes} the proxy reads`);
      }
    }
    if (available < length)
      return messageBytes !== null && fragmentBytes >= messageBytes
        ? complete(fragments, messageBytes)
        : { status: 'incomplete' };
    offset += RECORD_HEADER_BYTES + length;
  }
  return complete(fragments, messageBytes);
}

function complete(fragments: readonly Uint8Array[], messageBytes: number): ClientHelloRead {
  const message = concat(fragments, messageBytes);
  return parseClientHelloBody(message.subarray(HANDSHAKE_HEADER_BYTES));
}

/** The first bytes of a record, as far as they have arrived: a handshake record of TLS 1.0 to 1.3's framing. */
function checkRecordStart(bytes: Uint8Array): ClientHelloRead {
  if (bytes[0] !== CONTENT_TYPE_HANDSHAKE) {
    return invalid(
      `not TLS: the first byte is 0x${bytes[0]!.toString(16).padStart(2, '0')} ${printable(bytes)}`,
    );
  }
  if (bytes.length >= 2 && bytes[1] !== 3) return invalid('not TLS: the record version is not 3.x');
  if (bytes.length >= 3 && bytes[2]! > 4) return invalid(`not TLS: the record version is 3.${bytes[2]}`);
  return { status: 'incomplete' };
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

function concat(fragments: readonly Uint8Array[], length: number): Uint8Array {
  return Buffer.concat(fragments).subarray(0, length);
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
