import { describe, expect, it } from 'vitest';

import { ClientHelloReader, readClientHello } from '../../src/proxy/tls-client-hello.js';
import {
  builtClientHello,
  nodeClientHello,
  serverNameData,
  splitIntoRecords,
} from './tls-client-hello-support.js';

const MAX = 16 * 1024;

describe('reading a TLS ClientHello', () => {
  it("finds the server name of a real client's hello, lowercase and without a trailing dot", async () => {
    expect(readClientHello(await nodeClientHello('files.example.org'), MAX)).toEqual({
      status: 'hello',
      serverName: 'files.example.org',
    });
    expect(readClientHello(builtClientHello([[0, serverNameData('Files.Example.ORG.')]]), MAX)).toEqual({
      status: 'hello',
      serverName: 'files.example.org',
    });
  });

  it('reads a hello that names no server as such', async () => {
    expect(readClientHello(await nodeClientHello(), MAX)).toEqual({ status: 'hello', serverName: null });
    expect(readClientHello(builtClientHello(null), MAX)).toEqual({ status: 'hello', serverName: null });
    expect(readClientHello(builtClientHello([[10, Buffer.from([0, 2, 0, 29])]]), MAX)).toEqual({
      status: 'hello',
      serverName: null,
    });
  });

  it('waits for more at every cut of a hello, however it is cut', async () => {
    const hello = await nodeClientHello('pypi.org');
    for (let length = 0; length < hello.length; length++) {
      expect(readClientHello(hello.subarray(0, length), MAX), `${length} bytes`).toEqual({
        status: 'incomplete',
      });
    }
  });

  it('joins a hello split over several records, and reads what follows it as no part of it', async () => {
    const hello = await nodeClientHello('pypi.org');
    for (const fragmentBytes of [1, 3, 50, 200]) {
      const split = splitIntoRecords(hello, fragmentBytes);
      expect(split.length).toBeGreaterThan(hello.length);
      expect(readClientHello(split, MAX), `${fragmentBytes}-byte records`).toEqual({
        status: 'hello',
        serverName: 'pypi.org',
      });
      expect(readClientHello(split.subarray(0, split.length - 1), MAX)).toEqual({ status: 'incomplete' });
    }
    const followed = Buffer.concat([hello, Buffer.from([20, 3, 3, 0, 1, 1])]);
    expect(readClientHello(followed, MAX)).toEqual({ status: 'hello', serverName: 'pypi.org' });
  });

  it('reads the same fed a byte at a time, deciding at the byte that decides, and keeps its decision', async () => {
    const hello = splitIntoRecords(await nodeClientHello('pypi.org'), 7);
    const reader = new ClientHelloReader(MAX);
    for (let index = 0; index < hello.length - 1; index++) {
      expect(reader.push(hello.subarray(index, index + 1)).status, `byte ${index}`).toBe('incomplete');
    }
    expect(reader.push(hello.subarray(-1))).toEqual({ status: 'hello', serverName: 'pypi.org' });
    expect(reader.push(Buffer.from('anything after'))).toEqual({ status: 'hello', serverName: 'pypi.org' });
    const plain = new ClientHelloReader(MAX);
    expect(plain.push(Buffer.from('G'))).toMatchObject({ status: 'invalid' });
    expect(plain.push(await nodeClientHello('pypi.org'))).toMatchObject({ status: 'invalid' });
  });

  it('refuses what is not TLS at its first bytes, saying what came instead', () => {
    expect(readClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: pypi.org\r\n\r\n'), MAX)).toEqual({
      status: 'invalid',
      reason: 'not TLS: the first byte is 0x47 ("GET / HTTP/1.1..Host: py")',
    });
    expect(readClientHello(Buffer.from('G'), MAX).status).toBe('invalid');
    expect(readClientHello(Buffer.from([22, 9]), MAX)).toMatchObject({
      reason: 'not TLS: the record version is not 3.x',
    });
    expect(readClientHello(Buffer.from([22, 3, 1, 0, 0]), MAX).status).toBe('invalid');
    // An alert, then a hello: only a handshake may come first.
    expect(readClientHello(Buffer.from([21, 3, 3, 0, 2, 2, 40]), MAX).status).toBe('invalid');
    // A server's hello is no client's.
    const serverHello = builtClientHello(null);
    serverHello[5] = 2;
    expect(readClientHello(serverHello, MAX)).toMatchObject({
      reason: 'a TLS handshake of type 2, not a ClientHello',
    });
  });

  it('refuses a hello longer than the bound at once, without waiting for the rest', () => {
    const header = Buffer.from([22, 3, 1, 0x40, 0x00, 1, 0x00, 0x50, 0x00]); // a 20,480-byte hello announced
    expect(readClientHello(Buffer.concat([header, Buffer.alloc(100)]), MAX)).toEqual({
      status: 'invalid',
      reason: `a ClientHello of ${0x5000 + 4} bytes, more than the ${MAX} the proxy reads`,
    });
    expect(readClientHello(Buffer.from([22, 3, 1, 0x40, 0x01]), MAX)).toMatchObject({
      reason: 'a TLS record of 16385 bytes (a record holds 1 to 16384)',
    });
  });

  it('refuses malformed hellos: lengths that do not add up, two names, a name that is no host name', () => {
    const cases: Array<[Buffer, string]> = [
      [
        builtClientHello([[0, serverNameData('a.example', 'b.example')]]),
        'a server_name extension with two host names',
      ],
      [
        builtClientHello([
          [0, serverNameData('a.example')],
          [0, serverNameData('b.example')],
        ]),
        'a ClientHello with extension 0 twice',
      ],
      [
        builtClientHello([[0, serverNameData('evil.example\u0000.pypi.org')]]),
        'a server name that is not a host name',
      ],
      [builtClientHello([[0, serverNameData('')]]), 'a server name that is not a host name'],
      [
        builtClientHello([[0, Buffer.from([0, 9, 0, 0, 3, 97])]]),
        'a server_name extension whose list does not add up',
      ],
    ];
    for (const [bytes, reason] of cases) {
      const read = readClientHello(bytes, MAX);
      expect(read.status, reason).toBe('invalid');
      expect(read.status === 'invalid' && read.reason, reason).toContain(reason);
    }
    // The extensions block claims more bytes than the hello holds.
    const overlong = builtClientHello([[0, serverNameData('a.example')]]);
    const extensionsAt = 5 + 4 + 2 + 32 + 1 + 2 + 2 + 2;
    overlong.writeUInt16BE(overlong.readUInt16BE(extensionsAt) + 1, extensionsAt);
    expect(readClientHello(overlong, MAX)).toMatchObject({
      reason: 'a ClientHello whose extensions do not add up',
    });
    // The hello itself is shorter than its fixed fields.
    const short = Buffer.from([22, 3, 1, 0, 8, 1, 0, 0, 4, 3, 3, 0, 0]);
    expect(readClientHello(short, MAX)).toMatchObject({ reason: 'a ClientHello cut short' });
  });
});
