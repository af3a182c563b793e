import { Duplex } from 'node:stream';
import { connect } from 'node:tls';

/**
 * The ClientHello record Node's own TLS client sends first, for `servername` (none when absent): written into a
 * stream that only records, so no server and no certificate are needed.
 */
export function nodeClientHello(servername?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const recorder = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        done();
        resolve(chunk);
        // The write comes from inside connect(): end the client once connect has returned it.
        setImmediate(() => client.destroy());
      },
    });
    const client = connect({ socket: recorder, ...(servername === undefined ? {} : { servername }) });
    client.on('error', () => {});
    setTimeout(() => reject(new Error('no ClientHello in 5 s')), 5_000).unref();
  });
}

/** The handshake message inside a run of handshake records (what `splitIntoRecords` splits). */
export function handshakeOf(records: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < records.length;) {
    const length = records.readUInt16BE(offset + 3);
    parts.push(records.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  return Buffer.concat(parts);
}

/** The same handshake message in records of at most `fragmentBytes` each (TLS lets a client split it so). */
export function splitIntoRecords(records: Buffer, fragmentBytes: number): Buffer {
  const message = handshakeOf(records);
  const out: Buffer[] = [];
  for (let offset = 0; offset < message.length; offset += fragmentBytes) {
    const fragment = message.subarray(offset, offset + fragmentBytes);
    const header = Buffer.from([22, 3, 1, 0, 0]);
    header.writeUInt16BE(fragment.length, 3);
    out.push(header, fragment);
  }
  return Buffer.concat(out);
}

/** A minimal ClientHello record with the given extensions (`[type, data]`), for shapes Node's client never sends. */
export function builtClientHello(extensions: Array<[number, Buffer]> | null): Buffer {
  const u16 = (value: number) => Buffer.from([value >> 8, value & 255]);
  const extensionBytes =
    extensions === null
      ? Buffer.alloc(0)
      : (() => {
          const body = Buffer.concat(
            extensions.flatMap(([type, data]) => [u16(type), u16(data.length), data]),
          );
          return Buffer.concat([u16(body.length), body]);
        })();
  const body = Buffer.concat([
    Buffer.from([3, 3]),
    Buffer.alloc(32, 7), // random
    Buffer.from([0]), // no session id
    u16(2),
    Buffer.from([0x13, 0x01]), // TLS_AES_128_GCM_SHA256
    Buffer.from([1, 0]), // null compression
    extensionBytes,
  ]);
  const message = Buffer.concat([
    Buffer.from([1, body.length >> 16, (body.length >> 8) & 255, body.length & 255]),
    body,
  ]);
  return Buffer.concat([Buffer.from([22, 3, 1]), u16(message.length), message]);
}

/** A `server_name` extension's data naming these host names. */
export function serverNameData(...names: string[]): Buffer {
  const entries = Buffer.concat(
    names.flatMap((name) => [
      Buffer.from([0, name.length >> 8, name.length & 255]),
      Buffer.from(name, 'latin1'),
    ]),
  );
  return Buffer.concat([Buffer.from([entries.length >> 8, entries.length & 255]), entries]);
}
