import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';

import { normaliseHost } from './egress-allow-list.js';
import { ClientHelloReader } from './tls-client-hello.js';

/** The most a tunnel's client may send before its ClientHello is whole. */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;
/** How long a tunnel's client has to send it. */
export const CLIENT_HELLO_TIMEOUT_MS = 10_000;

export type TunnelHello = { ok: true; bytes: Buffer } | { ok: false; reason: string };

/**
 * Waits for the first bytes a client sends into a `CONNECT host:port` tunnel (after the proxy's 200) and decides
 * whether they may go on: a TLS ClientHello whose server name is the tunnel's host. A tunnel to an IP address passes
 * with a hello that names no server (clients send none for an address, RFC 6066 §3) and fails with one that names
 * any. Everything read is handed back to be sent first once the server is connected; the client is left paused.
 * `head`: what came with the CONNECT request itself.
 */
export function readTunnelHello(
  client: Duplex,
  host: string,
  head: Buffer,
  limits: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<TunnelHello> {
  const maxBytes = limits.maxBytes ?? MAX_CLIENT_HELLO_BYTES;
  const timeoutMs = limits.timeoutMs ?? CLIENT_HELLO_TIMEOUT_MS;
  const tunnelHost = normaliseHost(host);
  return new Promise((resolve) => {
    const reader = new ClientHelloReader(maxBytes);
    const received: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;
    const settle = (result: TunnelHello): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.pause();
      client.off('data', onData);
      client.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received.push(chunk);
      receivedBytes += chunk.length;
      const read = reader.push(chunk);
      if (read.status === 'incomplete') {
        if (receivedBytes >= maxBytes) {
          settle({
            ok: false,
            reason: `${maxBytes} bytes through the tunnel without a whole TLS ClientHello`,
          });
        }
        return;
      }
      if (read.status === 'invalid') {
        settle({ ok: false, reason: `a tunnel carries TLS only; it got ${read.reason}` });
        return;
      }
      settle(serverNameVerdict(tunnelHost, read.serverName, Buffer.concat(received)));
    };
    const onClose = (): void =>
      settle({ ok: false, reason: 'the client closed the tunnel before its TLS ClientHello was whole' });
    const timer = setTimeout(
      () => settle({ ok: false, reason: `no whole TLS ClientHello within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    client.on('data', onData);
    client.once('close', onClose);
    if (head.length > 0) onData(head);
  });
}

function serverNameVerdict(tunnelHost: string, serverName: string | null, bytes: Buffer): TunnelHello {
  if (isIP(tunnelHost) !== 0) {
    return serverName === null
      ? { ok: true, bytes }
      : {
          ok: false,
          reason: `the TLS server name "${serverName}" is not the tunnel's address ${tunnelHost}`,
        };
  }
  if (serverName === null)
    return { ok: false, reason: `the TLS ClientHello names no server (the tunnel is to ${tunnelHost})` };
  if (serverName !== tunnelHost) {
    return {
      ok: false,
      reason: `the TLS server name "${serverName}" is not the tunnel's host ${tunnelHost}`,
    };
  }
  return { ok: true, bytes };
}
