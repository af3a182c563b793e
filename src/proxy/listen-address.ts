import { UserError } from '../errors.js';
import type { ListenAddress } from './recording-proxy.js';

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
