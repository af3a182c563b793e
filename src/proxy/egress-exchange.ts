import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import { NO_EGRESS, type EgressCounts, type EgressLogRow } from './egress-log.js';
import { JsonlAppender } from './jsonl-appender.js';

const MAX_HOST_IN_ROW = 255;

/** One request through the egress proxy while it lasts; its row is written once, when it ends. */
export interface EgressExchange {
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

/** A request just arrived: refused until a check lets it pass. */
export function beginExchange(method: string, host: string, port: number | null): EgressExchange {
  return {
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
  };
}

/** The egress log and its counts: each exchange is counted once, and written while the log has room. */
export class EgressLedger {
  private readonly counted: EgressCounts = { ...NO_EGRESS };
  private readonly pending = new Set<Promise<void>>();
  private readonly log: JsonlAppender;
  private logged = 0;

  constructor(
    logFile: string,
    private readonly maxLogged: number,
  ) {
    this.log = new JsonlAppender(logFile);
  }

  counts(): EgressCounts {
    return { ...this.counted };
  }

  get error(): Error | null {
    return this.log.error;
  }

  finish(exchange: EgressExchange): void {
    if (exchange.done) return;
    exchange.done = true;
    const counts = this.counted;
    if (exchange.verdict === 'allowed') counts.requestsAllowed++;
    else counts.requestsRefused++;
    counts.bytesUp += exchange.bytesUp;
    counts.bytesDown += exchange.bytesDown;
    if (this.logged >= this.maxLogged) {
      counts.unloggedRequests++;
      return;
    }
    this.logged++;
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
    const written = this.log.append(JSON.stringify(row));
    this.pending.add(written);
    void written.then(() => this.pending.delete(written));
  }

  /** Waits for the rows queued so far, then closes the log. */
  async close(): Promise<void> {
    await Promise.all(this.pending);
    await this.log.close();
  }
}

/** The proxy's own answer to a plain request: the status and the reason, on one line. */
export function answer(response: ServerResponse, exchange: EgressExchange, status: number): void {
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
export function refuseRaw(socket: Duplex, exchange: EgressExchange, status: number): void {
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

/** A text for a row or an answer: control characters flattened, cut at `maxCharacters`. */
export function oneLine(text: string, maxCharacters: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return flat.length > maxCharacters ? `${flat.slice(0, maxCharacters)}…` : flat;
}
