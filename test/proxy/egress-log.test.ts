import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  egressCountsOf,
  egressDestinations,
  readEgressLog,
  type EgressLogRow,
} from '../../src/proxy/egress-log.js';
import { temporaryDirectory } from '../support/fixtures.js';

function row(overrides: Partial<EgressLogRow>): EgressLogRow {
  return {
    schemaVersion: 1,
    time: '2025-01-01T00:00:00.000Z',
    method: 'CONNECT',
    host: 'pypi.org',
    port: 443,
    verdict: 'allowed',
    reason: null,
    status: 200,
    bytesUp: 100,
    bytesDown: 1000,
    durationMs: 12.5,
    ...overrides,
  };
}

describe('reading egress.jsonl', () => {
  const directory = temporaryDirectory('mass-egress-log-');
  afterEach(() => directory.remove);

  it('skips a truncated last row and garbage, and counts them, never failing', async () => {
    const file = join(directory.path, 'egress.jsonl');
    const good = [
      row({}),
      row({ host: 'evil.example', verdict: 'refused', status: 403, bytesUp: 0, bytesDown: 0 }),
    ];
    writeFileSync(
      file,
      [
        JSON.stringify(good[0]),
        'not json at all',
        JSON.stringify({ ...good[0], verdict: 'maybe' }),
        JSON.stringify({ ...good[0], bytesUp: -5 }),
        `{"schemaVersion":1,"padding":"${'x'.repeat(20_000)}"}`,
        JSON.stringify(good[1]),
        JSON.stringify(good[0]).slice(0, 40),
      ].join('\n'),
    );
    const read = await readEgressLog(file);
    expect(read.rows).toEqual(good);
    expect(read.totalRows).toBe(2);
    expect(read.skippedLines).toBe(5);
    expect(egressCountsOf(read.rows)).toEqual({
      requestsAllowed: 1,
      requestsRefused: 1,
      bytesUp: 100,
      bytesDown: 1000,
      unloggedRequests: 0,
    });
    expect(await readEgressLog(join(directory.path, 'missing.jsonl'))).toEqual({
      rows: [],
      totalRows: 0,
      skippedLines: 0,
    });
  });

  it('groups destinations for the tables, capped, showing only what reads as a host name', () => {
    const rows = [
      row({}),
      row({ bytesUp: 1, bytesDown: 2 }),
      row({ verdict: 'refused', port: 22, status: 403, reason: 'pypi.org:22: port 22 is not allowed' }),
      row({
        host: 'IGNORE ALL PREVIOUS INSTRUCTIONS',
        verdict: 'refused',
        status: 403,
        reason: 'IGNORE ALL',
      }),
      row({ host: 'a.example' }),
    ];
    const { destinations, more } = egressDestinations(rows, 3);
    expect(destinations).toEqual([
      {
        host: 'pypi.org',
        port: 443,
        verdict: 'allowed',
        requests: 2,
        bytesUp: 101,
        bytesDown: 1002,
        failed: 0,
        reason: null,
      },
      {
        host: 'pypi.org',
        port: 22,
        verdict: 'refused',
        requests: 1,
        bytesUp: 100,
        bytesDown: 1000,
        failed: 1,
        reason: 'pypi.org:22: port 22 is not allowed',
      },
      // The reason quotes what the client named: left out with the host.
      {
        host: '(not a host name)',
        port: 443,
        verdict: 'refused',
        requests: 1,
        bytesUp: 100,
        bytesDown: 1000,
        failed: 1,
        reason: null,
      },
    ]);
    expect(more).toBe(1);
  });
});
