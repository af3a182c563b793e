import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { readEgressLog } from '../../src/proxy/egress-log.js';
import { startEgressProxy, type EgressProxy } from '../../src/proxy/egress-proxy.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { exchangeOnSocket, startByteSink, startTls, throughTunnel } from './egress-proxy-support.js';
import { nodeClientHello, splitIntoRecords } from './tls-client-hello-support.js';

/**
 * A `CONNECT` tunnel carries TLS to the host it named: its first bytes must be a ClientHello whose server name is
 * that host, or it is closed before the server is ever connected to (domain fronting through a shared CDN address,
 * plain HTTP with any Host header). The "server" is a byte sink on the host's loopback, which the run configuration
 * opens (as `network.privateDestinations` would) so that only the tunnel's own rules decide.
 */
describe('egress tunnels bound to their host', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let sink: Awaited<ReturnType<typeof startByteSink>>;
  let proxy: EgressProxy;
  let socketPath: string;
  let logFile: string;

  beforeEach(async () => {
    directory = temporaryDirectory('mass-tunnel-');
    sink = await startByteSink();
    socketPath = join(directory.path, 'egress.sock');
    logFile = join(directory.path, 'egress.jsonl');
    proxy = await startEgressProxy({
      allow: [`files.example.org:${sink.port}`, `127.0.0.1:${sink.port}`, 'files.example.org'],
      privateDestinations: ['files.example.org', `127.0.0.1:${sink.port}`],
      socketPath,
      logFile,
      lookup: async () => ['127.0.0.1'],
      clientHelloTimeoutMs: 300,
    });
  });
  afterEach(async () => {
    await proxy.close();
    await sink.close();
    directory.remove();
  });

  const rows = async () => {
    await proxy.close();
    return (await readEgressLog(logFile)).rows;
  };

  it("passes a TLS hello for the tunnel's own host on to the server, byte for byte", async () => {
    const tunnel = await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) =>
      startTls(socket, 'files.example.org'),
    );
    expect(tunnel.answer).toBe('HTTP/1.1 200 Connection Established');
    expect(sink.received).toHaveLength(1);
    const hello = sink.received[0]!;
    expect(hello[0]).toBe(22);
    expect(hello.includes(Buffer.from('files.example.org'))).toBe(true);
    const [row] = await rows();
    expect(row).toMatchObject({ method: 'CONNECT', verdict: 'allowed', status: 200, reason: null });
    expect(row!.bytesUp).toBe(hello.length);
    expect(row!.bytesDown).toBe('sink answer'.length);
  });

  it('closes a tunnel whose TLS server name is another host, and logs why; the server never hears of it', async () => {
    const tunnel = await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) =>
      startTls(socket, 'fronted.example.net'),
    );
    expect(tunnel.answer).toBe('HTTP/1.1 200 Connection Established');
    expect(tunnel.after).toHaveLength(0);
    expect(sink.received).toHaveLength(0);
    expect(await rows()).toEqual([
      expect.objectContaining({
        method: 'CONNECT',
        host: 'files.example.org',
        port: sink.port,
        verdict: 'refused',
        status: 403,
        reason: 'the TLS server name "fronted.example.net" is not the tunnel\'s host files.example.org',
        bytesUp: 0,
        bytesDown: 0,
      }),
    ]);
  });

  it('closes a tunnel that carries plain HTTP (any Host header) or a hello that names no server', async () => {
    await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) =>
      socket.write('GET / HTTP/1.1\r\nHost: fronted.example.net\r\n\r\n'),
    );
    await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) => startTls(socket));
    expect(sink.received).toHaveLength(0);
    const [plain, nameless] = await rows();
    expect(plain).toMatchObject({ verdict: 'refused', status: 403, bytesUp: 0 });
    expect(plain!.reason).toBe(
      'a tunnel carries TLS only; it got not TLS: the first byte is 0x47 ("GET / HTTP/1.1..Host: fr")',
    );
    expect(nameless).toMatchObject({
      verdict: 'refused',
      reason: 'the TLS ClientHello names no server (the tunnel is to files.example.org)',
    });
  });

  it('refuses CONNECT to port 80: plain HTTP goes in absolute form, where the host is checked', async () => {
    const answer = await exchangeOnSocket(
      socketPath,
      'CONNECT files.example.org:80 HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(answer).toContain('a tunnel carries TLS only; send plain HTTP in absolute form');
    const [row] = await rows();
    expect(row).toMatchObject({ method: 'CONNECT', port: 80, verdict: 'refused', status: 403 });
  });

  it('takes a tunnel to an IP address with a hello that names no server, and refuses one that names any', async () => {
    await throughTunnel(socketPath, `127.0.0.1:${sink.port}`, (socket) => startTls(socket));
    await throughTunnel(socketPath, `127.0.0.1:${sink.port}`, (socket) =>
      startTls(socket, 'files.example.org'),
    );
    expect(sink.received).toHaveLength(1);
    const [nameless, named] = await rows();
    expect(nameless).toMatchObject({ verdict: 'allowed', status: 200 });
    expect(named).toMatchObject({
      verdict: 'refused',
      reason: `the TLS server name "files.example.org" is not the tunnel's address 127.0.0.1`,
    });
  });

  it('waits for a hello split over records and TCP segments, and compares names without case or final dot', async () => {
    const hello = splitIntoRecords(await nodeClientHello('FILES.example.org.'), 64);
    await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) => {
      void (async () => {
        for (let offset = 0; offset < hello.length; offset += 100) {
          socket.write(hello.subarray(offset, offset + 100));
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
    });
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]!.equals(hello)).toBe(true);
    expect((await rows())[0]).toMatchObject({ verdict: 'allowed', bytesUp: hello.length });
  });

  it('closes a tunnel that sends no whole hello in time, or more than 16 KiB without one', async () => {
    const started = performance.now();
    await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) =>
      socket.write(Buffer.from([22, 3, 1])),
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    const records = Buffer.concat(
      Array.from({ length: 5 }, () =>
        Buffer.concat([Buffer.from([22, 3, 1, 0x10, 0x00]), Buffer.alloc(4096, 1)]),
      ),
    );
    await throughTunnel(socketPath, `files.example.org:${sink.port}`, (socket) => socket.write(records));
    expect(sink.received).toHaveLength(0);
    const [slow, large] = await rows();
    expect(slow).toMatchObject({ verdict: 'refused', reason: 'no whole TLS ClientHello within 0.3 s' });
    expect(large).toMatchObject({
      verdict: 'refused',
      reason: expect.stringMatching(
        /^a tunnel carries TLS only; it got a ClientHello of \d+ bytes, more than the 16384/,
      ),
    });
  });
});
