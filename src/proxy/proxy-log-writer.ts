import type { Exchange } from './exchange.js';
import { JsonlAppender } from './jsonl-appender.js';
import { ProxyLogEncoder, type RequestBody, type RowFields } from './log-encoder.js';
import { redact } from './log-redaction.js';
import type { ProxyLogRow, ProxyRefusal } from './log-row.js';
import { OpenCallsFile, openCallsPath } from './open-calls.js';
import type { ParsedJson } from './sse-recorder.js';

/** A request as it began, until its row is written. */
export interface CallStart {
  seq: number;
  startedAt: number;
  started: number;
  method: string;
  path: string;
  /** Every credential the call carried (and the proxy's own key), scrubbed from its row. */
  secrets: string[];
  recorded: boolean;
}

/** What a row says beyond the request line; what is left out was not known (refused before the body was read). */
export interface RowFacts {
  exchange: Exchange;
  requestBytes?: Buffer;
  parsed?: ParsedJson;
  /** Bytes received, when the body was not kept (over the bound). */
  requestByteCount?: number;
  model?: string | null;
  stream?: boolean;
  usageInjected?: boolean;
  refusal?: ProxyRefusal | null;
}

interface ProxyLogWriterOptions {
  /** The key the proxy holds: scrubbed from every row. */
  upstreamApiKey?: string;
  /** Called with each row once it is written, without its request (`request: null`). */
  onRow?: (row: ProxyLogRow) => void;
}

/**
 * The proxy's JSONL request log: one row per call, numbered in the order calls began, written when it ends, every
 * secret scrubbed. Rows store each thing once (see log-encoder.ts); `readProxyLog` gives them back whole.
 */
export class ProxyLogWriter {
  private sequence = 0;
  private readonly log: JsonlAppender;
  private readonly encoder = new ProxyLogEncoder();
  /** The calls begun and not yet recorded, beside the log for `mass status` (`requests-open.json`). */
  private readonly openCalls: OpenCallsFile;

  constructor(
    logFile: string,
    private readonly options: ProxyLogWriterOptions,
  ) {
    this.log = new JsonlAppender(logFile);
    this.openCalls = new OpenCallsFile(openCallsPath(logFile), this.encoder.writer);
  }

  get path(): string {
    return this.log.path;
  }

  /** Set when a row could not be written (a full disk, say): the log is then incomplete. */
  get error(): Error | null {
    return this.log.error;
  }

  /** A call as it begins: its number, its start and the secrets its row must not show. */
  begin(method: string, path: string, secrets: string[]): CallStart {
    if (this.options.upstreamApiKey) secrets.push(this.options.upstreamApiKey);
    const call = {
      seq: this.sequence++,
      startedAt: Date.now(),
      started: performance.now(),
      method,
      path,
      secrets,
      recorded: false,
    };
    const route = path.split('?')[0] ?? path;
    this.openCalls.begin({
      seq: call.seq,
      startedAt: new Date(call.startedAt).toISOString(),
      method,
      path: route,
    });
    return call;
  }

  /** Writes the call's row (once), with every secret the call carried scrubbed, and hands it to `onRow`. */
  async record(call: CallStart, facts: RowFacts): Promise<void> {
    if (call.recorded) return;
    const { exchange } = facts;
    const requestBytes = facts.requestBytes ?? Buffer.alloc(0);
    const parsed: ParsedJson = facts.parsed ?? { ok: false };
    const fields: RowFields = {
      seq: call.seq,
      startedAt: new Date(call.startedAt).toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: roundMs(performance.now() - call.started),
      method: call.method,
      path: call.path,
      status: exchange.status,
      model: facts.model ?? null,
      stream: facts.stream ?? false,
      requestIsJson: parsed.ok,
      response: exchange.response,
      bytes: { request: facts.requestByteCount ?? requestBytes.length, response: exchange.responseBytes },
      clientDisconnected: exchange.clientDisconnected,
      usageInjected: facts.usageInjected ?? false,
      error: exchange.error,
      attempts: exchange.attempts ?? [],
      refusal: facts.refusal ?? null,
      ...(exchange.replica === undefined ? {} : { replica: exchange.replica }),
    };
    const body: RequestBody = parsed.ok
      ? { json: true, value: parsed.value, bytes: requestBytes }
      : { json: false, text: requestBytes.length === 0 ? null : requestBytes.toString('utf8') };
    const encoded = this.encoder.encode(fields, body, call.secrets);
    call.recorded = true;
    await this.log.append(encoded.line);
    this.openCalls.end(call.seq);
    // Only a row the file holds may be named by later ones: after a write failed, no row is remembered any more.
    if (this.log.error === null) encoded.remember();
    if (this.options.onRow) {
      // The row's figures as the log has them, its request left out (it can be megabytes: the log holds it).
      const error = fields.error && redact(fields.error, call.secrets);
      this.options.onRow({ schemaVersion: 1, ...fields, request: null, error });
    }
  }

  async close(): Promise<void> {
    await this.openCalls.close();
    await this.log.close();
  }
}

/** Milliseconds to the microsecond, as rows give them. */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
