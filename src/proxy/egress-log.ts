import { z } from 'zod';

import { eachValidJsonLine } from '../store/json-lines.js';

/**
 * `egress.jsonl`: one row per request the egress proxy saw, allowed or refused, written whole when the request ends
 * (a tunnel when both sides have closed). The proxy writes it on the host, in the episode directory, which the
 * sandbox does not show: agent code can make rows appear (by making requests) but cannot write the file.
 */
export const EgressLogRow = z.object({
  schemaVersion: z.literal(1),
  /** When the request began (ISO 8601). */
  time: z.string(),
  /** `CONNECT`, `GET`, …; empty when the request could not be read. */
  method: z.string(),
  /** The host the client named, as it named it (cut to 255 characters); empty when there was none. */
  host: z.string(),
  port: z.number().int().nullable(),
  verdict: z.enum(['allowed', 'refused']),
  /**
   * Why it was refused (not on the allow-list, a non-public address the run configuration did not open, a tunnel
   * whose TLS server name is not its host), or what went wrong with an allowed one (cannot resolve, connection
   * refused); else null.
   */
  reason: z.string().nullable(),
  /**
   * The status the client got: the proxy's own (200 for a tunnel, 403, 400, 502) or the server's. A tunnel closed
   * after its 200 says how it ended instead: 403 when its first bytes were no TLS ClientHello for its host, 502 when
   * the server could not be reached.
   */
  status: z.number().int().nullable(),
  /** Bytes from the client to the server: the request body, or everything sent into a tunnel. */
  bytesUp: z.number().int().nonnegative(),
  /** Bytes from the server to the client: the response body, or everything a tunnel brought back. */
  bytesDown: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
});
export type EgressLogRow = z.infer<typeof EgressLogRow>;

/** Counts of an episode's egress, as `episode.json` keeps them. */
export const EgressCounts = z.object({
  requestsAllowed: z.number().int().nonnegative(),
  requestsRefused: z.number().int().nonnegative(),
  bytesUp: z.number().int().nonnegative(),
  bytesDown: z.number().int().nonnegative(),
  /** Requests past the log's row bound: counted here, not written. */
  unloggedRequests: z.number().int().nonnegative(),
});
export type EgressCounts = z.infer<typeof EgressCounts>;

export const NO_EGRESS: Readonly<EgressCounts> = {
  requestsAllowed: 0,
  requestsRefused: 0,
  bytesUp: 0,
  bytesDown: 0,
  unloggedRequests: 0,
};

/** A row of the proxy's is a few hundred bytes; anything far longer is not one. */
const MAX_ROW_BYTES = 16 * 1024;

export interface EgressLogRead {
  /** The first `maxRows` valid rows, in the order written. */
  rows: EgressLogRow[];
  /** Valid rows in the file, shown or not. */
  totalRows: number;
  /** Lines that were no row: not JSON, not a row, too long, or a last line its writer never finished. */
  skippedLines: number;
}

/**
 * The egress log, leniently: a row cut by a killed proxy, or anything else that is not a row, is skipped and
 * counted, never an error. A missing file has no rows.
 */
export async function readEgressLog(
  file: string,
  options: { maxRows?: number; maxBytes?: number } = {},
): Promise<EgressLogRead> {
  const maxRows = options.maxRows ?? Number.POSITIVE_INFINITY;
  const rows: EgressLogRow[] = [];
  let totalRows = 0;
  const { skippedLines } = await eachValidJsonLine(
    file,
    EgressLogRow,
    { maxLineBytes: MAX_ROW_BYTES, maxBytes: options.maxBytes },
    (row) => {
      totalRows++;
      if (rows.length < maxRows) rows.push(row);
    },
  );
  return { rows, totalRows, skippedLines };
}

/** Rows added up. */
export function egressCountsOf(rows: readonly EgressLogRow[]): EgressCounts {
  const counts = { ...NO_EGRESS };
  for (const row of rows) {
    if (row.verdict === 'allowed') counts.requestsAllowed++;
    else counts.requestsRefused++;
    counts.bytesUp += row.bytesUp;
    counts.bytesDown += row.bytesDown;
  }
  return counts;
}

/** The requests to one host and port with one verdict, added up: a line of the judge's and the viewer's table. */
export interface EgressDestination {
  /** The host as logged, or `(not a host name)` when the client named something else. */
  host: string;
  port: number | null;
  verdict: EgressLogRow['verdict'];
  requests: number;
  bytesUp: number;
  bytesDown: number;
  /** Requests that got no answer from the server or an error status (a refusal, a name that does not resolve, a 404). */
  failed: number;
  /** The first reason logged for one of them (why it was refused or what went wrong); null when none, or when the host is not shown. */
  reason: string | null;
}

const HOST_NAME = /^(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}\.?$|^\[?[0-9A-Fa-f:.]+\]?$/;

/**
 * The rows grouped by host, port and verdict, in the order first seen, at most `maxDestinations` of them (`more`
 * counts the rest). What agent code put where a host belongs is shown only when it reads as a host name.
 */
export function egressDestinations(
  rows: readonly EgressLogRow[],
  maxDestinations = 20,
): { destinations: EgressDestination[]; more: number } {
  const groups = new Map<string, EgressDestination>();
  for (const row of rows) {
    const host = HOST_NAME.test(row.host) ? row.host : row.host === '' ? '(none)' : '(not a host name)';
    const key = JSON.stringify([host, row.port, row.verdict]);
    let group = groups.get(key);
    if (!group) {
      group = {
        host,
        port: row.port,
        verdict: row.verdict,
        requests: 0,
        bytesUp: 0,
        bytesDown: 0,
        failed: 0,
        reason: null,
      };
      groups.set(key, group);
    }
    group.requests++;
    if (row.status === null || row.status >= 400) {
      group.failed++;
      // The reason quotes the host the client named: shown only where the host itself is.
      if (group.reason === null && host === row.host && row.reason !== null) group.reason = row.reason;
    }
    group.bytesUp += row.bytesUp;
    group.bytesDown += row.bytesDown;
  }
  const all = [...groups.values()];
  return { destinations: all.slice(0, maxDestinations), more: Math.max(0, all.length - maxDestinations) };
}
