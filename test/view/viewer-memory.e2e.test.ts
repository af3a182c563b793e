import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { cp, link, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { proxyLog, writeViewerRun } from './synthetic-viewer-run.js';

const script = fileURLToPath(new URL('./support/episode-page-memory.ts', import.meta.url));
const MiB = 1024 * 1024;
/** The log's size: a team's request bodies, each recorded whole, plus one oversized request. */
const FILLER_ROWS = 150;
const FILLER_BYTES = MiB;
const OVERSIZED_BYTES = 24 * MiB;
/** What one page may add to the viewer's peak memory, whatever the log's size (reading the log whole cost ~3x it). */
const PAGE_MEMORY_BOUND = 160 * MiB;

let root: string;
let ids: Awaited<ReturnType<typeof writeViewerRun>>;

/** Appends rows of the shape the proxy writes, each with a request body of `bytes`, to an episode's log. */
async function writeBigLog(file: string): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => out.write(text, (error) => (error ? reject(error) : resolve())));
  const [template] = proxyLog();
  for (const row of proxyLog()) await write(`${JSON.stringify(row)}\n`);
  const filler = (seq: number, bytes: number) =>
    JSON.stringify({
      ...template,
      seq,
      request: { model: 'toy', messages: [{ role: 'user', content: 'x'.repeat(bytes) }] },
    });
  for (let seq = 3; seq < 3 + FILLER_ROWS; seq++) await write(`${filler(seq, FILLER_BYTES)}\n`);
  await write(`${filler(3 + FILLER_ROWS, OVERSIZED_BYTES)}\n`);
  await new Promise<void>((resolve) => out.end(resolve));
}

beforeAll(async () => {
  root = join(await mkdtemp(join(tmpdir(), 'mass-view-memory-')), 'run');
  ids = await writeViewerRun(root);
  const big = join(root, 'episodes', ids.v1, 'requests.jsonl');
  await writeBigLog(big);
  // A second episode with the same log (a hard link: no second copy on disk) and no threads.jsonl, whose
  // conversation would have to be rebuilt from the log.
  const unthreaded = join(root, 'episodes', 'L0-demo-potency-unthreaded');
  await cp(join(root, 'episodes', ids.reference), unthreaded, { recursive: true, verbatimSymlinks: true });
  await rm(join(unthreaded, 'threads.jsonl'));
  await rm(join(unthreaded, 'requests.jsonl'));
  await link(big, join(unthreaded, 'requests.jsonl'));
}, 120_000);
afterAll(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

describe('mass view: a large proxy log', () => {
  it('costs an episode page a bounded amount of memory, and the page says what it left out', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        root,
        `/episodes/${ids.reference}/`,
        `/episodes/${ids.v1}/`,
        '/episodes/L0-demo-potency-unthreaded/',
      ],
      { maxBuffer: 16 * MiB },
    );
    const measured = JSON.parse(stdout) as {
      before: number;
      after: number;
      pages: Array<{ status: number; notes: string[] }>;
    };
    const grown = measured.after - measured.before;
    expect(grown, `peak memory grew by ${Math.round(grown / MiB)} MiB`).toBeLessThan(PAGE_MEMORY_BOUND);
    expect(measured.pages.map((page) => page.status)).toEqual([200, 200]);
    const [threaded, unthreaded] = measured.pages;
    expect(threaded!.notes).toContainEqual(
      expect.stringMatching(
        /requests\.jsonl: 1 line\(s\) longer than 16,777,216 bytes were left out here \(line 154\)/,
      ),
    );
    expect(unthreaded!.notes).toContainEqual(
      expect.stringMatching(/too large to rebuild the conversation from here/),
    );
  }, 180_000);
});
