import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

import { NO_EXCHANGE, type Exchange } from './exchange.js';

/**
 * Answers a request itself, with an OpenAI-style error, and describes the exchange for the log. `unreadBody`: the
 * request whose body was not read (or not all of it); its connection is closed after the answer (`closeUnread`).
 */
export function refuse(
  response: ServerResponse,
  status: number,
  message: string,
  options: { unreadBody?: IncomingMessage; allow?: string } = {},
): Exchange {
  const body = { error: { message, type: 'mass_proxy_refusal' } };
  const headers: OutgoingHttpHeaders = {};
  if (options.allow !== undefined) headers.allow = options.allow;
  if (options.unreadBody) closeUnread(options.unreadBody, response);
  sendJson(response, status, body, headers);
  return {
    ...NO_EXCHANGE,
    status,
    response: { kind: 'json', body },
    responseBytes: Buffer.byteLength(JSON.stringify(body)),
    error: message,
  };
}

/** How long a connection refused mid-body stays open, its input discarded, for the client to read the answer. */
const LINGER_MS = 2_000;

/**
 * Ends a connection whose request body was left unread, once the answer is sent: the proxy's side is closed (the
 * client reads the answer, then the end), while what the client still sends is read and thrown away until it
 * stops or `LINGER_MS` pass. Closing at once would reset the connection over the unread bytes, and the client would
 * see a broken pipe in place of the answer.
 */
function closeUnread(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket;
  response.once('finish', () => {
    request.resume();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  if (response.destroyed || response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
