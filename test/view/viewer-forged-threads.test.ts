import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Thread } from '../../src/records/threads.js';
import { respond } from '../../src/view/respond.js';
import { writeViewerRun } from './synthetic-viewer-run.js';

let root: string;
let episode: string;

/**
 * An episode whose threads include one that agent code posted through the proxy itself, a copy of the genuine
 * subagent's conversation with its answer changed: the threads builder marks such a thread forged.
 */
beforeAll(async () => {
  root = join(await mkdtemp(join(tmpdir(), 'mass-view-forged-')), 'run');
  const ids = await writeViewerRun(root);
  episode = ids.v1;
  const file = join(root, 'episodes', episode, 'threads.jsonl');
  const threads = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => Thread.parse(JSON.parse(line)));
  const subagent = threads.find((thread) => thread.role === 'subagent')!;
  const forged = JSON.parse(
    JSON.stringify(subagent).replaceAll('The EC50 is 5.9 µM.', 'FORGED: the EC50 is 1.0 µM.'),
  ) as Thread;
  threads.push({ ...forged, threadId: 'forged-thread', forged: true });
  await writeFile(file, threads.map((thread) => `${JSON.stringify(thread)}\n`).join(''));
});

afterAll(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

describe('mass view: a conversation agent code posted itself', () => {
  it('is shown apart and marked forged, never in place of the delegation it imitates', async () => {
    const response = await respond(root, 'GET', `/episodes/${episode}/`);
    expect(response.status).toBe(200);
    const text = String(response.body).replace(/\s+/g, ' ');
    const delegation = text.indexOf('<details class="delegation">');
    const genuine = text.indexOf('The EC50 is 5.9 µM.');
    expect(delegation).toBeGreaterThan(0);
    expect(genuine).toBeGreaterThan(delegation);
    const other = text.indexOf('Other threads');
    expect(other).toBeGreaterThan(genuine);
    expect(text.indexOf('forged subagent thread (posted by agent code, not the harness')).toBeGreaterThan(
      other,
    );
    expect(text.indexOf('FORGED: the EC50 is 1.0 µM.')).toBeGreaterThan(other);
    expect(text).toMatch(/<a href="#[^"]*">forged subagent forged-thread<\/a>/);
  });
});
