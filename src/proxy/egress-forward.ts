import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import { errorMessage } from '../errors.js';
import type { EgressDestination } from './egress-destination.js';
import { answer, beginExchange, oneLine, type EgressLedger } from './egress-exchange.js';

/** What the egress proxy's handlers share: the checks, the log, the open sockets and the timeouts. */
export interface EgressRelay {
  destination: EgressDestination;
  ledger: EgressLedger;
  /** Keeps a socket among those `close` ends. */
  track(socket: Duplex): void;
  /** Where a connection to an address that passed is made. */
  route(address: string, port: number): { host: string; port: number };
  idleTimeoutMs: number;
  /** How long a tunnel's client has to send its whole TLS ClientHello (default `readTunnelHello`'s). */
  clientHelloTimeoutMs?: number;
}

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

/**
 * A plain HTTP request in absolute form (`GET http://host/path`): checked, then sent to the address that passed with
 * its host as `Host`, without the hop-by-hop headers either way; anything else gets the proxy's one-line answer.
 */
export async function forwardPlainRequest(
  relay: EgressRelay,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const method = request.method ?? '';
  let target: URL | null = null;
  try {
    target = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.url ?? '') ? new URL(request.url!) : null;
  } catch {
    target = null;
  }
  const exchange = beginExchange(method, target?.hostname ?? '', null);
  response.once('close', () => relay.ledger.finish(exchange));
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
  const address = await relay.destination(exchange, target.hostname, exchange.port);
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
      ...relay.route(address, exchange.port),
      method,
      path: `${target.pathname}${target.search}`,
      headers: headers.flat(),
      setHost: false,
      agent: false,
      timeout: relay.idleTimeoutMs,
    });
  } catch (error) {
    exchange.reason = `the request cannot be forwarded: ${oneLine(errorMessage(error), 200)}`;
    answer(response, exchange, 400);
    return;
  }
  upstream.on('socket', (socket) => relay.track(socket));
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
