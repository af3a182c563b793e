import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';

import { errorMessage } from '../errors.js';
import { beginExchange, oneLine, refuseRaw } from './egress-exchange.js';
import type { EgressRelay } from './egress-forward.js';
import { readTunnelHello } from './tunnel-hello.js';

/** The plain-HTTP port: a tunnel there would carry requests whose host nobody checks. */
const PLAIN_HTTP_PORT = 80;

/**
 * `CONNECT host:port`: checked, answered 200, then opened to the address that passed only once the client's TLS
 * ClientHello names the same host (`tunnel-hello.ts`); refused on port 80, where plain HTTP goes in absolute form.
 */
export function openTunnel(relay: EgressRelay, request: IncomingMessage, client: Duplex, head: Buffer): void {
  relay.track(client);
  const authority = request.url ?? '';
  const parsed = parseAuthority(authority);
  const exchange = beginExchange('CONNECT', parsed?.host ?? oneLine(authority, 80), parsed?.port ?? null);
  client.on('error', () => client.destroy());
  client.once('close', () => relay.ledger.finish(exchange));
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
  void relay
    .destination(exchange, parsed.host, parsed.port)
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
        timeoutMs: relay.clientHelloTimeoutMs,
      });
      if (!hello.ok) {
        exchange.reason = oneLine(hello.reason, 300);
        client.destroy();
        return;
      }
      if (client.destroyed) return;
      Object.assign(exchange, { verdict: 'allowed', status: 200, reason: null });
      const upstream = connect(relay.route(address, parsed.port));
      relay.track(upstream);
      upstream.setTimeout(relay.idleTimeoutMs, () => upstream.destroy());
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
}

/** `host:port` or `[v6]:port` of a CONNECT line. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]@]+):([0-9]{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1]!, port };
}
