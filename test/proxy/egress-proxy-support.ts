import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';

import { afterEach, beforeEach } from 'vitest';

import { readEgressLog } from '../../src/proxy/egress-log.js';
import { startEgressProxy, type EgressProxy, type EgressProxyOptions } from '../../src/proxy/egress-proxy.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * A server on the host's loopback that answers every request with what it got (and, in a header, the names of the
 * headers it got): the one place egress may go.
 */
export async function startEchoServer(): Promise<{
  port: number;
  server: Server;
  close: () => Promise<void>;
}> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = `echo ${request.method} ${request.url} ${Buffer.concat(chunks).length} bytes\n`;
      response.writeHead(200, {
        'content-type': 'text/plain',
        'content-length': Buffer.byteLength(body),
        // What reached the server, for the tests of what the proxy passes on.
        'x-received-headers': Object.keys(request.headers).sort().join(','),
        connection: 'close, x-server-hop',
        'x-server-hop': 'for the proxy only',
      });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `text` to the Unix socket (as the sandbox's forwarder would relay it), then `after` once the first answer's
 * head has arrived (a request through a tunnel), and returns everything read until the proxy closes.
 */
export function exchangeOnSocket(socketPath: string, text: string | Buffer, after?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    const chunks: Buffer[] = [];
    let sentAfter = false;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (after !== undefined && !sentAfter && Buffer.concat(chunks).includes('\r\n\r\n')) {
        sentAfter = true;
        socket.write(after);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
    socket.write(text);
  });
}

/**
 * A TCP server on the host's loopback standing in for a TLS server behind a tunnel: it keeps every byte each
 * connection brings, answers the first with a few bytes of its own and closes.
 */
export async function startByteSink(): Promise<{
  port: number;
  /** What each connection brought, in the order they came. */
  received: Buffer[];
  close: () => Promise<void>;
}> {
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    const index = received.push(Buffer.alloc(0)) - 1;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      const first = received[index]!.length === 0;
      received[index] = Buffer.concat([received[index]!, chunk]);
      if (first) socket.end('sink answer');
    });
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * `CONNECT authority` on the proxy's socket; once the tunnel is open, `send` writes into it (a TLS client's hello, or
 * anything else). Resolves when the proxy closes the connection, with the proxy's answer line and whatever came back
 * through the tunnel.
 */
export function throughTunnel(
  socketPath: string,
  authority: string,
  send: (tunnel: Socket) => void,
): Promise<{ answer: string; after: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    let head = Buffer.alloc(0);
    let opened = false;
    const after: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const answer = head.subarray(0, end).toString('latin1');
      if (head.length > end + 4) after.push(head.subarray(end + 4));
      socket.on('data', (more: Buffer) => after.push(more));
      if (/^HTTP\/1\.1 200 /.test(answer)) {
        opened = true;
        send(socket);
      }
      socket.once('close', () => resolve({ answer, after: Buffer.concat(after) }));
    };
    socket.on('data', onData);
    socket.on('error', (error) => {
      if (!opened) reject(error);
    });
    socket.setTimeout(15_000, () => socket.destroy(new Error('the proxy kept the tunnel open for 15 s')));
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

/** Starts a TLS client on the tunnel (its ClientHello names `servername`, or nothing); its failure is expected. */
export function startTls(tunnel: Socket, servername?: string): void {
  const client = tlsConnect({
    socket: tunnel,
    rejectUnauthorized: false,
    ...(servername === undefined ? {} : { servername }),
  });
  client.on('error', () => tunnel.destroy());
}

/**
 * What a test of the egress proxy works with, made afresh before each test of the calling `describe` and closed after
 * it: an echo server (and how many requests reached it) and a byte sink on the host's loopback, the proxy's socket
 * and log, and the proxy the test starts with `start`. `get` sends a plain request through it; `rows` closes it and
 * reads its log.
 */
export function egressTestBed(prefix: string) {
  let directory: ReturnType<typeof temporaryDirectory>;
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let sink: Awaited<ReturnType<typeof startByteSink>>;
  let proxy: EgressProxy | null = null;
  let reached = 0;
  beforeEach(async () => {
    directory = temporaryDirectory(prefix);
    echo = await startEchoServer();
    reached = 0;
    echo.server.on('request', () => reached++);
    sink = await startByteSink();
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = null;
    await echo.close();
    await sink.close();
    directory.remove();
  });
  const bed = {
    get echo() {
      return echo;
    },
    get sink() {
      return sink;
    },
    get reached() {
      return reached;
    },
    get socketPath() {
      return join(directory.path, 'egress.sock');
    },
    get logFile() {
      return join(directory.path, 'egress.jsonl');
    },
    start: async (options: Omit<EgressProxyOptions, 'socketPath' | 'logFile'>) => {
      proxy = await startEgressProxy({ ...options, socketPath: bed.socketPath, logFile: bed.logFile });
    },
    get: (url: string) =>
      exchangeOnSocket(bed.socketPath, `GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    rows: async () => {
      await proxy!.close();
      return (await readEgressLog(bed.logFile)).rows;
    },
  };
  return bed;
}
