import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BareUpstream {
  url: string;
  /** How many requests it received. */
  calls: () => number;
  close: () => Promise<void>;
}

/**
 * A model server that answers every request with `answer`, byte for byte as the test writes it (for answers the
 * scripted server does not give: an event split mid-key over two writes, odd headers, escaped JSON).
 */
export async function startBareUpstream(
  answer: (request: IncomingMessage, response: ServerResponse, body: string) => void | Promise<void>,
): Promise<BareUpstream> {
  let calls = 0;
  const server: Server = createServer((request, response) => {
    calls++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void answer(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
