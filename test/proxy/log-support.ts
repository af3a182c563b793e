import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ProxyLogEncoder, type RequestBody, type RowFields } from '../../src/proxy/log-encoder.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';

/** The recorded logs of whole bodies (schemaVersion 1) the tests re-encode. */
export const RECORDED_LOGS = [
  'test/fixtures/qwen-code-0.24.4/requests.jsonl',
  'test/fixtures/distill/team-a/requests.jsonl',
];

/** The rows of a log of whole bodies, as `JSON.parse` gives them (key order as written). */
export function wholeRows(file: string): ProxyLogRow[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ProxyLogRow);
}

export function fieldsOf(row: ProxyLogRow): RowFields {
  const { schemaVersion: _version, request: _request, ...fields } = row;
  return fields;
}

export function bodyOf(row: ProxyLogRow): RequestBody {
  return row.requestIsJson
    ? { json: true, value: row.request }
    : { json: false, text: row.request as string | null };
}

/** The rows as the proxy's writer stores them now (each line written, then remembered), one line each. */
export function encodeRows(rows: ProxyLogRow[], secrets: string[] = []): string[] {
  const encoder = new ProxyLogEncoder();
  return rows.map((row) => {
    const encoded = encoder.encode(fieldsOf(row), bodyOf(row), secrets);
    encoded.remember();
    return encoded.line;
  });
}

/** Writes lines as a log file `requests.jsonl` in `directory` (made if need be); returns its path. */
export function writeLog(directory: string, lines: string[], end = '\n'): string {
  mkdirSync(directory, { recursive: true });
  const file = join(directory, 'requests.jsonl');
  writeFileSync(file, lines.join('\n') + end);
  return file;
}

/** Bytes of the lines as a log file. */
export function logBytes(lines: string[]): number {
  return lines.reduce((total, line) => total + Buffer.byteLength(line) + 1, 0);
}
