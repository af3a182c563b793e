import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import { errorMessage } from '../errors.js';
import { NO_EXCHANGE, type Exchange } from './exchange.js';

/** Parser errors that mean the client closed its connection, not that it sent something malformed. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'HPE_INVALID_EOF_STATE']);

/**
 * A request Node's HTTP parser could not read (a broken request line, oversized headers, a bad chunk): answered
 * 400 (431, 408) as Node would, unless a response (`inProgress`) is already under way on that connection, and the
 * connection closed. Returns the exchange to record, or null when the client went away mid-request (nothing to
 * answer or record).
 */
export function answerMalformed(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  inProgress: ServerResponse | undefined,
): Exchange | null {
  if (CLIENT_GONE.has(error.code ?? '') || !socket.writable) {
    socket.destroy();
    return null;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = `mass proxy: a malformed HTTP request was refused (${error.code ?? 'parse error'}: ${errorMessage(error)})`;
  const answering = inProgress !== undefined && inProgress.headersSent && !inProgress.writableFinished;
  const body = JSON.stringify({ error: { message, type: 'mass_proxy_refusal' } });
  if (!answering) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
  return {
    ...NO_EXCHANGE,
    status: answering ? null : status,
    response: { kind: 'json', body: JSON.parse(body) as unknown },
    error: message,
  };
}
