import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

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
