import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import type { EgressLogRow } from '../../src/proxy/egress-log.js';
import { respond } from '../../src/view/respond.js';
import { writeViewerRun } from './synthetic-viewer-run.js';

let root: string;
let networked: string;
let offline: string;

function row(host: string, port: number, verdict: EgressLogRow['verdict'], bytesDown: number): string {
  const value: EgressLogRow = {
    schemaVersion: 1,
    time: '2025-01-01T00:00:00.000Z',
    method: 'GET',
    host,
    port,
    verdict,
    reason: null,
    status: verdict === 'allowed' ? 200 : 403,
    bytesUp: 0,
    bytesDown,
    durationMs: 3,
  };
  return `${JSON.stringify(value)}\n`;
}

/** An episode whose task allowed pypi.org: its record's counts and its egress log, a hostile row and a cut one. */
beforeAll(async () => {
  root = join(await mkdtemp(join(tmpdir(), 'mass-view-egress-')), 'run');
  const ids = await writeViewerRun(root);
  networked = ids.v1;
  offline = ids.v0;
  const recordFile = join(root, 'episodes', networked, 'episode.json');
  const record = EpisodeRecord.parse(JSON.parse(await readFile(recordFile, 'utf8')), recordFile);
  await EpisodeRecord.write(recordFile, {
    ...record,
    egress: {
      allow: ['pypi.org'],
      requestsAllowed: 2,
      requestsRefused: 1,
      bytesUp: 0,
      bytesDown: 4096,
      unloggedRequests: 0,
    },
  });
  const log = join(root, 'episodes', networked, 'egress.jsonl');
  await writeFile(
    log,
    row('pypi.org', 443, 'allowed', 1024) +
      row('pypi.org', 443, 'allowed', 3072) +
      `${JSON.stringify({ ...JSON.parse(row('files.pythonhosted.org', 443, 'allowed', 0)), status: 502, reason: 'cannot resolve files.pythonhosted.org' })}\n`,
  );
  await appendFile(log, row('<script>alert(1)</script>', 80, 'refused', 0) + '{"schemaVersion":1,"ti');
});

afterAll(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

describe('mass view: the network an episode reached', () => {
  it('shows the allow-list, the counts and a table of destinations, escaped, with the cut row noted', async () => {
    const response = await respond(root, 'GET', `/episodes/${networked}/`);
    expect(response.status).toBe(200);
    const text = String(response.body).replace(/\s+/g, ' ');
    expect(text).toContain('<h2>Network</h2>');
    expect(text).toContain(
      'The task allows pypi.org: 2 requests allowed, 1 refused; 0 bytes sent, 4,096 received.',
    );
    expect(text).toContain(
      '<td>pypi.org</td><td>443</td><td><span class="good">allowed</span></td><td>2</td><td>0</td><td>0</td><td>4,096</td><td></td>',
    );
    // An allowed request that failed says why.
    expect(text).toContain(
      '<td>files.pythonhosted.org</td><td>443</td><td><span class="good">allowed</span></td><td>1</td><td><span class="bad">1</span></td><td>0</td><td>0</td><td>cannot resolve files.pythonhosted.org</td>',
    );
    expect(text).toContain('(not a host name)');
    expect(text).not.toContain('<script>alert(1)');
    expect(text).toContain('1 lines of');
  });

  it('has no network section when the task allowed none', async () => {
    const response = await respond(root, 'GET', `/episodes/${offline}/`);
    expect(String(response.body)).not.toContain('<h2>Network</h2>');
  });
});
