// The viewer in a real browser (Debian's chromium) on a synthetic run: every page loads with no console error, a
// reader gets from the run to an episode and into a subagent's thread by clicking, and none of the payloads planted
// in the run's records, file names and workspace files runs, even with the pages' content security policy removed.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startViewer, type RunningViewer } from '../../src/view/index.js';
import { LIVE_SCRIPT } from '../../src/view/live-script.js';
import { launchBrowser, type TestBrowser, type WatchedPage } from '../support/browser.js';
import { EVALUATION, HOSTILE_FILE_NAME, PAYLOAD, writeViewerRun } from './synthetic-viewer-run.js';

/** Screenshots are kept for people to look at (git-ignored). */
const ARTEFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'view');

let root: string;
let ids: Awaited<ReturnType<typeof writeViewerRun>>;
let viewer: RunningViewer;
let browser: TestBrowser;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-view-browser-'));
  ids = await writeViewerRun(join(root, 'run'));
  viewer = await startViewer({ directory: join(root, 'run'), port: 0 });
  await mkdir(ARTEFACTS, { recursive: true });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await rm(root, { recursive: true, force: true });
});

async function expectNothingRan(watched: WatchedPage, where: string): Promise<void> {
  expect(
    await watched.page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned),
    where,
  ).toBeUndefined();
  expect(watched.dialogs, where).toEqual([]);
  expect(watched.pageErrors, where).toEqual([]);
}

describe('mass view in chromium', () => {
  it('serves on 127.0.0.1 only', () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it('every page loads with no console error and runs no payload, even without its security policy', async () => {
    const pages = [
      '',
      'episodes/',
      'generations/L0/',
      'generations/L0/demo-potency/',
      'search/L0/demo-potency/',
      `episodes/${ids.v1}/`,
      `episodes/${ids.v0}/`,
      `episodes/${ids.reference}/`,
      `episodes/${ids.v1}/files/analysis.py`,
      `episodes/${ids.v1}/files/report.md`,
      `episodes/${ids.v1}/files/${encodeURIComponent(HOSTILE_FILE_NAME)}`,
      `compare?x=episodes/${ids.v0}&y=episodes/${ids.v1}`,
      `evaluation/${EVALUATION.name}/`,
      `compare?x=evaluation/demo/episodes/${EVALUATION.candidate}&y=evaluation/demo/episodes/${EVALUATION.baseline}`,
      `episodes/${ids.v1}/raw/evil.svg`,
      `episodes/${ids.v1}/raw/evil.html`,
    ];
    const watched = await browser.newPage();
    // Without the policy, only the escaping and the served content types stand between a payload and the page.
    await watched.page.route('**/*', async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      delete headers['content-security-policy'];
      await route.fulfill({ response, headers });
    });
    for (const path of pages) {
      const response = await watched.page.goto(viewer.url + path, { waitUntil: 'load' });
      expect(response?.status(), path).toBe(200);
      expect(watched.consoleErrors, path).toEqual([]);
      // The viewer's own live script, on the run page of a run not finished, is the one script a page may hold.
      const scripts = await watched.page.locator('script').allTextContents();
      expect(
        scripts.filter((text) => path !== '' || text !== LIVE_SCRIPT),
        path,
      ).toEqual([]);
      expect(await watched.page.locator('iframe, object, embed, svg').count(), path).toBe(0);
      expect(await watched.page.locator('a[href^="javascript:" i]').count(), path).toBe(0);
      await expectNothingRan(watched, path);
    }
    // The workspace's SVG is shown as its text, and its payload is there to read.
    expect(await watched.page.locator('body').textContent()).toContain('<script>parent.__pwned');
    await watched.page.close();
  }, 180_000);

  it('a reader goes from the run to an episode and opens the subagent’s thread in place by clicking', async () => {
    const watched = await browser.newPage();
    const { page } = watched;
    await page.goto(viewer.url, { waitUntil: 'load' });
    await page.screenshot({ path: join(ARTEFACTS, 'run.png'), fullPage: true });
    await page.getByRole('link', { name: 'L0', exact: true }).click();
    await page.waitForURL(/\/generations\/L0\/$/);
    await page.getByRole('link', { name: 'demo-potency', exact: true }).click();
    await page.waitForURL(/\/generations\/L0\/demo-potency\/$/);
    await page.screenshot({ path: join(ARTEFACTS, 'task.png'), fullPage: true });
    await page.getByRole('link', { name: 'v1', exact: true }).first().click();
    await page.waitForURL(new RegExp(`/episodes/${ids.v1}/$`));

    const subagentAnswer = page.getByText('The EC50 is 5.9 µM.').first();
    expect(await subagentAnswer.isVisible()).toBe(false);
    await page.locator('details.delegation > summary').first().click();
    expect(await subagentAnswer.isVisible()).toBe(true);
    // The subagent's thread shows its own call figures and its reasoning, folded.
    const delegation = page.locator('details.delegation').first();
    expect(await delegation.locator('.call-stats').first().textContent()).toContain('340 ms');
    expect(await delegation.locator('details.reasoning').first().isVisible()).toBe(true);
    // The report is rendered, with the workspace's image loaded through the file route.
    const image = page.locator('#report img').first();
    expect(
      await image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
    ).toBe(1);
    expect(await page.locator('#report').textContent()).toContain(PAYLOAD.script);
    expect(watched.consoleErrors).toEqual([]);
    await expectNothingRan(watched, 'episode');
    await page.screenshot({ path: join(ARTEFACTS, 'episode.png'), fullPage: true });

    await page.goto(`${viewer.url}compare?x=episodes/${ids.v0}&y=episodes/${ids.v1}`, { waitUntil: 'load' });
    await page.screenshot({ path: join(ARTEFACTS, 'compare.png'), fullPage: true });
    await page.goto(`${viewer.url}search/L0/demo-potency/`, { waitUntil: 'load' });
    await page.screenshot({ path: join(ARTEFACTS, 'search.png'), fullPage: true });
    expect(watched.consoleErrors).toEqual([]);
    await page.close();
  }, 180_000);

  // The README's picture: `MASS_VIEW_SCREENSHOT_RUN=runs/demo npx vitest run test/view/viewer-browser.e2e.test.ts`.
  it.runIf(process.env.MASS_VIEW_SCREENSHOT_RUN)(
    'writes docs/images/viewer.png from a demo run',
    async () => {
      const demo = await startViewer({ directory: process.env.MASS_VIEW_SCREENSHOT_RUN!, port: 0 });
      const watched = await browser.newPage();
      try {
        await watched.page.goto(`${demo.url}episodes/L0-demo-potency-v1/`, { waitUntil: 'load' });
        await watched.page.locator('details.delegation > summary').first().click();
        await watched.page.locator('#threads').evaluate((element) => element.scrollIntoView());
        expect(watched.consoleErrors).toEqual([]);
        await watched.page.screenshot({
          path: join(import.meta.dirname, '..', '..', 'docs', 'images', 'viewer.png'),
        });
      } finally {
        await watched.page.close();
        await demo.close();
      }
    },
    120_000,
  );
});
