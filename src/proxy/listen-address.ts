import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';

import { UserError } from '../errors.js';

/** Where a proxy listens: a TCP host and port, or a Unix socket. */
export type ListenAddress = { host: string; port: number } | { socketPath: string };

/** `host:port`, `:port`, `port`, or a Unix socket path (anything with a `/`, or ending in `.sock`). */
export function parseListenAddress(text: string): ListenAddress {
  if (text.includes('/') || text.endsWith('.sock')) return { socketPath: text };
  const match = /^(?:(\[[^\]]+\]|[^:]*):)?(\d+)$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65535) {
    throw new UserError(
      `--listen "${text}" is neither host:port (e.g. 127.0.0.1:8100) nor a Unix socket path (e.g. ./proxy.sock)`,
    );
  }
  const host = match[1] ? match[1].replace(/^\[|\]$/g, '') : '127.0.0.1';
  return { host, port };
}

/** Binds `server` to `address`; a stale socket left at the path is replaced, anything else there is refused. */
export async function listenOn(server: Server, address: ListenAddress): Promise<void> {
  if ('socketPath' in address && existsSync(address.socketPath)) {
    if (!lstatSync(address.socketPath).isSocket()) {
      throw new UserError(`--listen ${address.socketPath} exists and is not a socket: choose another path`);
    }
    unlinkSync(address.socketPath);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = 'socketPath' in address ? address.socketPath : `${address.host}:${address.port}`;
      reject(
        error.code === 'EADDRINUSE'
          ? new UserError(`cannot listen on ${where}: the address is in use; choose another --listen`)
          : error,
      );
    });
    if ('socketPath' in address) server.listen(address.socketPath, () => resolve());
    else server.listen(address.port, address.host, () => resolve());
  });
}

/** Removes the socket file a proxy listened on, once it is closed. */
export function removeSocket(address: ListenAddress): void {
  if ('socketPath' in address && existsSync(address.socketPath)) unlinkSync(address.socketPath);
}
