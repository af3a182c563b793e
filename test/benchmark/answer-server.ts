import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server on the host's loopback standing in for a site a task fetches from: it answers `42` to every request and
 * keeps the paths asked for. No trial reaches it unless the run configuration opens it (`network.privateDestinations`).
 */
export async function startAnswerServer(): Promise<{
  port: number;
  requests: string[];
  close: () => Promise<void>;
}> {
  const requests: string[] = [];
  const site = createServer((request, response) => {
    requests.push(request.url ?? '');
    response.end('42');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return {
    port: (site.address() as AddressInfo).port,
    requests,
    close: async () => {
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    },
  };
}
