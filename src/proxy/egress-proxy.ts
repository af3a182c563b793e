import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import { errorMessage } from '../errors.js';
import type { EgressAllowance } from './egress-allow-list.js';
import { egressDestination } from './egress-destination.js';
import { beginExchange, EgressLedger } from './egress-exchange.js';
import { forwardPlainRequest, type EgressRelay } from './egress-forward.js';
import type { EgressCounts } from './egress-log.js';
import { openTunnel } from './egress-tunnel.js';
import { listenOn, removeSocket } from './listen-address.js';

/**
 * The egress proxy of an episode whose task allows network: the only way out of the sandbox besides the model. It
 * forwards plain HTTP requests in absolute form (`GET http://host/path`, sent with that host as its `Host`) and
 * tunnels `CONNECT host:port` for TLS, deciding each by the host and port the client named, against the task's
 * allow-list, or letting every host and port pass that check when the run gives `ANY_PUBLIC_HOST` (a public
 * benchmark's task that asks for the internet). A name is resolved here and every address it resolves to is checked; the connection goes to an address
 * that passed, never to a name, so DNS cannot change its answer in between. A loopback, private, link-local or other
 * non-public address (`destination-class.ts`), whether listed as an IP address or reached through a name, is refused
 * unless the run configuration opens it (`privateDestinations`): a task alone never reaches the host's model server,
 * its Redis or a cloud's metadata endpoint. A tunnel must carry TLS to the host it named: the first bytes through it
 * must be a ClientHello whose server name is the `CONNECT` host (`tunnel-hello.ts`), or it is closed before the
 * server is connected; `CONNECT` to port 80 is refused (plain HTTP goes in absolute form). Everything else gets a
 * one-line answer: 403 (not allowed), 400 (not a proxy request) or 502 (the server could not be reached). Every
 * request is a row of the log (`egress-log.ts`), with the reason when refused.
 */
export interface EgressProxyOptions {
  /**
   * The task's allow-list entries (`environment.network.allow`), or `ANY_PUBLIC_HOST`: every public host on every
   * port (a public benchmark's task that asks for the internet), each request logged as any other.
   */
  allow: EgressAllowance;
  /**
   * Destinations the run configuration lets reach a non-public address (`network.privateDestinations`; entries as an
   * allow-list's, without a port any port). Default none.
   */
  privateDestinations?: readonly string[];
  /** The Unix socket to listen on; a stale socket there is replaced. */
  socketPath: string;
  /** `egress.jsonl`; appended to. */
  logFile: string;
  /** Resolves a name to its addresses; default the system's resolver. */
  lookup?: (host: string) => Promise<string[]>;
  /**
   * Where a connection to an address that passed is made; default that address and port. Every check is made on the
   * address, never on what this returns: tests send a public address to a server on their loopback with it.
   */
  route?: (address: string, port: number) => { host: string; port: number };
  /** Rows written at most; later requests are counted (`unloggedRequests`), not written. Default 100,000. */
  maxLoggedRequests?: number;
  /** A tunnel or forwarded request with no traffic this long is closed. Default 10 minutes. */
  idleTimeoutMs?: number;
  /** Connections at once; more are dropped by the system. Default 256. */
  maxConnections?: number;
  /** How long a tunnel's client has to send its whole TLS ClientHello. Default 10 s. */
  clientHelloTimeoutMs?: number;
}

export interface EgressProxy {
  readonly socketPath: string;
  /** What the proxy saw so far, written or not. */
  counts(): EgressCounts;
  /** Set when a row could not be written (a full disk, say). */
  readonly logError: Error | null;
  /** Stops listening, closes every connection (their rows are written) and the log. */
  close(): Promise<void>;
}

const MAX_HEADER_BYTES = 16 * 1024;
const HEADERS_TIMEOUT_MS = 30_000;

/**
 * Starts the egress proxy on its socket: plain requests go to `forwardPlainRequest` (`egress-forward.ts`), tunnels to
 * `openTunnel` (`egress-tunnel.ts`), both through the checks of `egressDestination` (`egress-destination.ts`), each
 * request a row of the ledger (`egress-exchange.ts`).
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const ledger = new EgressLedger(options.logFile, options.maxLoggedRequests ?? 100_000);
  const sockets = new Set<Duplex>();
  const relay: EgressRelay = {
    destination: egressDestination(options.allow, options.privateDestinations ?? [], options.lookup),
    ledger,
    track: (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    },
    route: options.route ?? ((host: string, port: number) => ({ host, port })),
    idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    clientHelloTimeoutMs: options.clientHelloTimeoutMs,
  };

  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: 0,
      keepAliveTimeout: 5_000,
    },
    (request, response) =>
      // Agent code is hostile: whatever it sends that Node's client refuses ends its own request, never the proxy.
      void forwardPlainRequest(relay, request, response).catch(() => response.destroy()),
  );
  server.maxConnections = options.maxConnections ?? 256;
  server.on('connection', (socket: Socket) => {
    relay.track(socket);
    socket.setTimeout(relay.idleTimeoutMs, () => socket.destroy());
  });
  server.on('connect', (request, client: Duplex, head: Buffer) => openTunnel(relay, request, client, head));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const exchange = beginExchange('', '', null);
    exchange.reason = `unreadable request (${error.code ?? errorMessage(error)})`;
    exchange.status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    ledger.finish(exchange);
    if (socket.writable) {
      const status = exchange.status === 431 ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
    socket.destroy();
  });

  const listen = { socketPath: options.socketPath };
  await listenOn(server, listen);
  let closing: Promise<void> | undefined;

  return {
    socketPath: options.socketPath,
    counts: () => ledger.counts(),
    get logError() {
      return ledger.error;
    },
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const open = [...sockets].map(
          (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
        );
        for (const socket of sockets) socket.destroy();
        await Promise.all([closed, ...open]);
        // The rows of the connections just closed are queued from their close events.
        await new Promise((resolve) => setImmediate(resolve));
        await ledger.close();
        removeSocket(listen);
      })();
      return closing;
    },
  };
}
