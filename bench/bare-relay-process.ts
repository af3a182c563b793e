// A bare Node relay (no parsing, no log), the floor for any proxy written on Node's http: prints its URL.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const upstream = new URL(process.argv[2]!);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const server = createServer((incoming, outgoing) => {
  const forwarded = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      path: incoming.url,
      method: incoming.method,
      headers: incoming.headers,
      agent,
    },
    (response) => {
      outgoing.writeHead(response.statusCode ?? 502, response.headers);
      response.pipe(outgoing);
    },
  );
  incoming.pipe(forwarded);
});
server.listen(0, '127.0.0.1', () =>
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
);
process.on('SIGTERM', () => process.exit(0));
