import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

import { temporaryPathFor } from '../store/atomic-write.js';
import { eachProxyLogRow, type ProxyLogRow } from './log-row.js';

/**
 * A row as one line of a log of whole bodies (schemaVersion 1), its fields in the order the writer of that version
 * wrote them, `request` last; fields a row lacks (`attempts`, `refusal` in logs older still) stay out.
 */
export function wholeRowLine(row: ProxyLogRow): string {
  return JSON.stringify({
    schemaVersion: 1,
    seq: row.seq,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    durationMs: row.durationMs,
    method: row.method,
    path: row.path,
    status: row.status,
    model: row.model,
    stream: row.stream,
    requestIsJson: row.requestIsJson,
    response: row.response,
    bytes: row.bytes,
    clientDisconnected: row.clientDisconnected,
    usageInjected: row.usageInjected,
    error: row.error,
    attempts: row.attempts,
    refusal: row.refusal,
    request: row.request,
  });
}

/**
 * Writes a proxy log, whatever versions its rows are, as a log of whole bodies (schemaVersion 1 rows, what earlier
 * versions of mass wrote), for tools outside mass that read request bodies from it. Row by row: the output can be
 * far larger than the log (every request whole), and is never held. To `out`, or to standard output without it
 * (synchronous on Linux, for files, terminals and pipes alike). A file is written beside `out` and renamed over it
 * once whole, so that `out` never holds part of an export. Returns the number of rows written.
 */
export async function exportProxyLog(log: string, out?: string): Promise<number> {
  let rows = 0;
  const each = (write: (line: string) => void) =>
    eachProxyLogRow(log, (row) => {
      write(`${wholeRowLine(row)}\n`);
      rows++;
    });
  if (out === undefined) {
    await each((line) => void process.stdout.write(line));
    return rows;
  }
  const temporary = temporaryPathFor(out);
  try {
    const fd = openSync(temporary, 'wx');
    try {
      await each((line) => void writeSync(fd, line));
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, out);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return rows;
}
