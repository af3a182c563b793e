import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import { errorMessage } from '../errors.js';
import { destinationClass } from './destination-class.js';
import {
  EgressAllowList,
  normaliseHost,
  type EgressAllowance,
  type EgressVerdict,
} from './egress-allow-list.js';
import { NO_EGRESS, type EgressCounts, type EgressLogRow } from './egress-log.js';
import { JsonlAppender } from './jsonl-appender.js';
import { listenOn, removeSocket } from './listen-address.js';
import { PrivateDestinations } from './private-destinations.js';
import { readTunnelHello } from './tunnel-hello.js';

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
const MAX_HOST_IN_ROW = 255;
/** The plain-HTTP port: a tunnel there would carry requests whose host nobody checks. */
const PLAIN_HTTP_PORT = 80;
/** Headers that belong to one hop (RFC 9110 §7.6.1) or to the proxy: never passed on. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The standard hop-by-hop headers and those a message's own `Connection` header names (RFC 9110 §7.6.1). */
function hopHeaders(connection: string | undefined): Set<string> {
  const named = (connection ?? '')
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '');
  return new Set([...HOP_HEADERS, ...named]);
}

/** One request while it lasts; its row is written once, when it ends. */
interface Exchange {
  started: number;
  startedAt: string;
  method: string;
  host: string;
  port: number | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
  status: number | null;
  bytesUp: number;
  bytesDown: number;
  done: boolean;
}

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const allowList = new EgressAllowList(options.allow);
  const privateDestinations = new PrivateDestinations(options.privateDestinations ?? []);
  const lookup = options.lookup ?? defaultLookup;
  const route = options.route ?? ((host: string, port: number) => ({ host, port }));
  const maxLogged = options.maxLoggedRequests ?? 100_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 10 * 60_000;
  const log = new JsonlAppender(options.logFile);
  const counts: EgressCounts = { ...NO_EGRESS };
  const pending = new Set<Promise<void>>();
  const sockets = new Set<Duplex>();
  let logged = 0;

  const begin = (method: string, host: string, port: number | null): Exchange => ({
    started: performance.now(),
    startedAt: new Date().toISOString(),
    method: method.slice(0, 32),
    host: host.slice(0, MAX_HOST_IN_ROW),
    port,
    verdict: 'refused',
    reason: null,
    status: null,
    bytesUp: 0,
    bytesDown: 0,
    done: false,
  });
  const finish = (exchange: Exchange): void => {
    if (exchange.done) return;
    exchange.done = true;
    if (exchange.verdict === 'allowed') counts.requestsAllowed++;
    else counts.requestsRefused++;
    counts.bytesUp += exchange.bytesUp;
    counts.bytesDown += exchange.bytesDown;
    if (logged >= maxLogged) {
      counts.unloggedRequests++;
      return;
    }
    logged++;
    const row: EgressLogRow = {
      schemaVersion: 1,
      time: exchange.startedAt,
      method: exchange.method,
      host: exchange.host,
      port: exchange.port,
      verdict: exchange.verdict,
      reason: exchange.reason,
      status: exchange.status,
      bytesUp: exchange.bytesUp,
      bytesDown: exchange.bytesDown,
      durationMs: Math.round((performance.now() - exchange.started) * 1000) / 1000,
    };
    const written = log.append(JSON.stringify(row));
    pending.add(written);
    void written.then(() => pending.delete(written));
  };
  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  /**
   * Where a request may go: the verdict on the name and port, then the address to connect to: the IP address as
   * listed or one the name resolves to, public or opened by the run configuration. Null with the exchange settled
   * (refused or failed) when it may not go anywhere.
   */
  const destination = async (exchange: Exchange, host: string, port: number): Promise<string | null> => {
    const verdict: EgressVerdict = allowList.verdict(host, port);
    if (!verdict.allowed) {
      exchange.reason = verdict.reason;
      exchange.status = 403;
      return null;
    }
    const name = normaliseHost(host);
    let addresses: string[] = [name];
    if (isIP(name) === 0) {
      try {
        addresses = await lookup(name);
      } catch (error) {
        exchange.verdict = 'allowed';
        exchange.reason = `cannot resolve ${name}: ${errorMessage(error)}`.slice(0, 500);
        exchange.status = 502;
        return null;
      }
    }
    const reachable = (address: string): boolean =>
      isIP(address) !== 0 &&
      (destinationClass(address).kind === 'public' || privateDestinations.allows(name, address, port));
    const address = addresses.find(reachable);
    if (address === undefined) {
      exchange.reason = unreachableReason(name, port, addresses).slice(0, 500);
      exchange.status = 403;
      return null;
    }
    exchange.verdict = 'allowed';
    return address;
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
      void forward(request, response).catch(() => response.destroy()),
  );
  server.maxConnections = options.maxConnections ?? 256;
  server.on('connection', (socket: Socket) => {
    track(socket);
    socket.setTimeout(idleTimeoutMs, () => socket.destroy());
  });

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? '';
    let target: URL | null = null;
    try {
      target = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.url ?? '') ? new URL(request.url!) : null;
    } catch {
      target = null;
    }
    const exchange = begin(method, target?.hostname ?? '', null);
    response.once('close', () => finish(exchange));
    request.on('error', () => response.destroy());
    if (target === null || target.protocol !== 'http:' || target.hostname === '') {
      exchange.reason =
        target?.protocol === 'https:'
          ? 'https:// URLs go through CONNECT host:443, not as a plain request'
          : `not a proxy request (${oneLine(request.url ?? '', 80)}): send an absolute http:// URL, or CONNECT host:port`;
      answer(response, exchange, 400);
      return;
    }
    exchange.port = target.port === '' ? 80 : Number(target.port);
    if (target.username !== '' || target.password !== '') {
      exchange.reason = 'credentials in the URL are not forwarded';
      answer(response, exchange, 400);
      return;
    }
    const address = await destination(exchange, target.hostname, exchange.port);
    if (address === null) {
      answer(response, exchange, exchange.status ?? 403);
      return;
    }
    const headers: Array<[string, string]> = [];
    const requestHops = hopHeaders(request.headers.connection);
    for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
      const name = request.rawHeaders[index]!;
      if (requestHops.has(name.toLowerCase()) || name.toLowerCase() === 'host') continue;
      headers.push([name, request.rawHeaders[index + 1]!]);
    }
    headers.push(['Host', target.host], ['Connection', 'close']);
    if (request.headers['transfer-encoding'] !== undefined) headers.push(['Transfer-Encoding', 'chunked']);
    let upstream: ReturnType<typeof httpRequest>;
    try {
      upstream = httpRequest({
        ...route(address, exchange.port),
        method,
        path: `${target.pathname}${target.search}`,
        headers: headers.flat(),
        setHost: false,
        agent: false,
        timeout: idleTimeoutMs,
      });
    } catch (error) {
      exchange.reason = `the request cannot be forwarded: ${oneLine(errorMessage(error), 200)}`;
      answer(response, exchange, 400);
      return;
    }
    upstream.on('socket', track);
    upstream.on('timeout', () => upstream.destroy(new Error('the server went quiet')));
    upstream.on('response', (answerFromServer) => {
      exchange.status = answerFromServer.statusCode ?? null;
      const relayed: string[] = [];
      const answerHops = hopHeaders(answerFromServer.headers.connection);
      for (let index = 0; index + 1 < answerFromServer.rawHeaders.length; index += 2) {
        const name = answerFromServer.rawHeaders[index]!;
        if (answerHops.has(name.toLowerCase())) continue;
        relayed.push(name, answerFromServer.rawHeaders[index + 1]!);
      }
      try {
        response.writeHead(answerFromServer.statusCode ?? 502, relayed);
      } catch (error) {
        exchange.reason = `the server's answer could not be relayed: ${errorMessage(error)}`;
        upstream.destroy();
        response.destroy();
        return;
      }
      answerFromServer.on('data', (chunk: Buffer) => (exchange.bytesDown += chunk.length));
      answerFromServer.on('error', () => response.destroy());
      answerFromServer.pipe(response);
    });
    upstream.on('error', (error) => {
      exchange.reason ??= oneLine(errorMessage(error), 300);
      if (!response.headersSent) answer(response, exchange, 502);
      else response.destroy();
    });
    response.once('close', () => upstream.destroy());
    request.on('data', (chunk: Buffer) => (exchange.bytesUp += chunk.length));
    request.pipe(upstream);
  }

  server.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    const authority = request.url ?? '';
    const parsed = parseAuthority(authority);
    const exchange = begin('CONNECT', parsed?.host ?? oneLine(authority, 80), parsed?.port ?? null);
    client.on('error', () => client.destroy());
    client.once('close', () => finish(exchange));
    if (parsed === null) {
      exchange.reason = `CONNECT takes host:port, not "${oneLine(authority, 80)}"`;
      refuseRaw(client, exchange, 400);
      return;
    }
    if (parsed.port === PLAIN_HTTP_PORT) {
      exchange.reason = `CONNECT to port ${PLAIN_HTTP_PORT} is refused: a tunnel carries TLS only; send plain HTTP in absolute form (GET http://${parsed.host}/…)`;
      refuseRaw(client, exchange, 403);
      return;
    }
    void destination(exchange, parsed.host, parsed.port)
      .then(async (address) => {
        if (address === null) return refuseRaw(client, exchange, exchange.status ?? 403);
        if (client.destroyed) return;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        // Refused until its ClientHello passes: the client has its 200, so the refusal is the closed tunnel and the
        // row, written when the client goes, says why.
        exchange.verdict = 'refused';
        exchange.status = 403;
        exchange.reason = 'the client closed the tunnel before its TLS ClientHello was whole';
        const hello = await readTunnelHello(client, parsed.host, head, {
          timeoutMs: options.clientHelloTimeoutMs,
        });
        if (!hello.ok) {
          exchange.reason = oneLine(hello.reason, 300);
          client.destroy();
          return;
        }
        if (client.destroyed) return;
        Object.assign(exchange, { verdict: 'allowed', status: 200, reason: null });
        const upstream = connect(route(address, parsed.port));
        track(upstream);
        upstream.setTimeout(idleTimeoutMs, () => upstream.destroy());
        let connected = false;
        upstream.once('connect', () => {
          connected = true;
          exchange.bytesUp += hello.bytes.length;
          upstream.write(hello.bytes);
          client.on('data', (chunk: Buffer) => (exchange.bytesUp += chunk.length));
          upstream.on('data', (chunk: Buffer) => (exchange.bytesDown += chunk.length));
          client.pipe(upstream);
          upstream.pipe(client);
        });
        upstream.on('error', (error) => {
          exchange.reason ??= oneLine(errorMessage(error), 300);
          // The client had its 200 already: the row says the server was never reached.
          if (!connected) exchange.status = 502;
          client.destroy();
        });
        upstream.once('close', () => client.destroy());
        client.once('close', () => upstream.destroy());
      })
      .catch(() => client.destroy());
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const exchange = begin('', '', null);
    exchange.reason = `unreadable request (${error.code ?? errorMessage(error)})`;
    exchange.status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    finish(exchange);
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
    counts: () => ({ ...counts }),
    get logError() {
      return log.error;
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
        await Promise.all(pending);
        await log.close();
        removeSocket(listen);
      })();
      return closing;
    },
  };
}

async function defaultLookup(host: string): Promise<string[]> {
  const results = await dnsLookup(host, { all: true, verbatim: true });
  return results.map((result) => result.address);
}

/** Why none of the addresses may be reached: the first one's class, or that there were none. */
function unreachableReason(name: string, port: number, addresses: readonly string[]): string {
  const first = addresses[0];
  if (first === undefined) return `${name}: resolves to no address`;
  const what = isIP(first) === 0 ? 'not an IP address' : destinationClass(first).why;
  const where = `${name.includes(':') ? `[${name}]` : name}:${port}`;
  const subject = first === name ? `${where} is ${what}` : `${where} resolves to ${first}, ${what}`;
  return `${subject}; only the run configuration opens such a destination (network.privateDestinations)`;
}

/** `host:port` or `[v6]:port` of a CONNECT line. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]@]+):([0-9]{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1]!, port };
}

/** The proxy's own answer to a plain request: the status and the reason, on one line. */
function answer(response: ServerResponse, exchange: Exchange, status: number): void {
  exchange.status = status;
  const body = `mass egress proxy: ${exchange.reason ?? 'refused'}\n`;
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

/** The same on a socket taken over by CONNECT. */
function refuseRaw(socket: Duplex, exchange: Exchange, status: number): void {
  exchange.status = status;
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = `mass egress proxy: ${exchange.reason ?? 'refused'}\n`;
  const text = { 400: 'Bad Request', 403: 'Forbidden', 502: 'Bad Gateway' }[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function oneLine(text: string, maxCharacters: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return flat.length > maxCharacters ? `${flat.slice(0, maxCharacters)}…` : flat;
}
