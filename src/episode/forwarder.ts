import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

/** One port of the sandbox's loopback and the Unix socket on the host it leads to. */
export interface Relay {
  port: number;
  socketPath: string;
}

/**
 * The forwarder that runs inside the sandbox, where `--unshare-net` leaves only loopback: for each relay it listens on
 * 127.0.0.1:<port> and relays every connection to that relay's Unix socket, bind-mounted in (the episode's model
 * proxy, and its egress proxy when the task allows network). It is plain JavaScript on Node's built-ins, written to a
 * file at run time, so it works alike from the sources under vitest and from the compiled package. Arguments: a
 * file descriptor on which it writes `ready` once every port listens (`-` for none), and the relays as JSON
 * (`[{"port":18080,"socketPath":"/…/proxy.sock"}]`).
 */
export const FORWARDER_SOURCE = `// Written by mass (src/episode/forwarder.ts). Relays ports of 127.0.0.1 to Unix sockets of the host.
import { closeSync, writeSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

const [readyFd, relaysJson] = process.argv.slice(2);
const relays = JSON.parse(relaysJson);
let listening = 0;
for (const { port, socketPath } of relays) {
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = createConnection({ path: socketPath, allowHalfOpen: true });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', (error) => {
      process.stderr.write('mass forwarder: ' + socketPath + ': ' + error.message + '\\n');
      closeBoth();
    });
    client.on('error', closeBoth);
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on('error', (error) => {
    process.stderr.write('mass forwarder: cannot listen on 127.0.0.1:' + port + ': ' + error.message + '\\n');
    process.exit(1);
  });
  server.listen(port, '127.0.0.1', () => {
    if (++listening < relays.length || readyFd === '-') return;
    writeSync(Number(readyFd), 'ready\\n');
    closeSync(Number(readyFd));
  });
}
`;

export const FORWARDER_FILE_NAME = 'forwarder.mjs';

/** Writes the forwarder into `directory` and returns its path; readable by every uid (a sandbox's own), whatever the umask. */
export function writeForwarder(directory: string): string {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, FORWARDER_FILE_NAME);
  writeFileSync(path, FORWARDER_SOURCE);
  chmodSync(path, 0o644);
  return path;
}

export interface HostForwarder {
  port: number;
  close(): Promise<void>;
}

/**
 * The same relay on the host, in this process, on a port the system picks: used when running without a sandbox,
 * so that the harness reaches the proxy through a loopback URL in both modes.
 */
export async function startHostForwarder(socketPath: string): Promise<HostForwarder> {
  const connections = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = createConnection({ path: socketPath, allowHalfOpen: true });
    connections.add(client).add(upstream);
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      connections.delete(client);
      connections.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', closeBoth);
      socket.on('close', closeBoth);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
