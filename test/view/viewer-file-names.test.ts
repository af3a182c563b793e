import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { respond } from '../../src/view/respond.js';
import { writeViewerRun } from './synthetic-viewer-run.js';

let root: string;
let ids: Awaited<ReturnType<typeof writeViewerRun>>;

/** Linux takes any bytes but `/` and NUL in a name: `résumé` in Latin-1, and a folder named with a lone 0xFF. */
const LATIN1_NAME = Buffer.from('r\xe9sum\xe9.txt', 'latin1');
const FOLDER_NAME = Buffer.from([0x64, 0xff]);

beforeAll(async () => {
  root = join(await mkdtemp(join(tmpdir(), 'mass-view-names-')), 'run');
  ids = await writeViewerRun(root);
  for (const episode of [ids.v1, ids.v0]) {
    const workspace = join(root, 'episodes', episode, 'workspace');
    await writeFile(Buffer.concat([Buffer.from(`${workspace}/`), LATIN1_NAME]), 'written by an agent');
    const folder = Buffer.concat([Buffer.from(`${workspace}/`), FOLDER_NAME]);
    await mkdir(folder);
    await writeFile(Buffer.concat([folder, Buffer.from('/inner.txt')]), 'inside');
  }
});
afterAll(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

async function get(target: string) {
  const response = await respond(root, 'GET', target);
  return { ...response, text: String(response.body).replace(/>\s+</g, '><').replace(/\s+/g, ' ') };
}

describe('mass view: a workspace file name that is not UTF-8', () => {
  it('is listed on the episode page with its bytes escaped, and the rest of the page still shows', async () => {
    const page = await get(`/episodes/${ids.v1}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('r%E9sum%E9.txt <span class="muted">(its name is not UTF-8');
    expect(page.text).toContain('d%FF/inner.txt <span class="muted">(its name is not UTF-8');
    expect(page.text).not.toContain('href="/episodes/L0-demo-potency-v1/files/r%EF%BF%BD');
    // The other files are still listed and linked, and the conversation is there.
    expect(page.text).toContain(`href="/episodes/${ids.v1}/files/analysis.py"`);
    expect(page.text).toContain('<details class="delegation">');
  });

  it('is refused, saying why, when its page is asked for, and comparisons still work', async () => {
    for (const kind of ['files', 'raw']) {
      const file = await get(`/episodes/${ids.v1}/${kind}/r%E9sum%E9.txt`);
      expect(file.status).toBe(404);
      expect(file.text).toContain('names a file whose name is not UTF-8');
    }
    const compare = await get(`/compare?x=episodes/${ids.v0}&y=episodes/${ids.v1}`);
    expect(compare.status).toBe(200);
    expect(compare.text).toContain('analysis.py: identical');
    expect(compare.text).toContain('r%E9sum%E9.txt (its name is not UTF-8');
  });
});
