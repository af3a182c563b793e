// The report in a real browser (Debian's chromium): it loads without a console error, every chart has drawn marks,
// and no payload planted in the run's records runs, with the page's content security policy and without it.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { writeReport } from '../../src/report/index.js';
import { launchBrowser, type TestBrowser, type WatchedPage } from '../support/browser.js';
import { PAYLOADS, writeSyntheticRun } from './synthetic-run.js';

/** Screenshots are kept for people to look at (git-ignored). */
const ARTEFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'report');

let root: string;
let reportFile: string;
let browser: TestBrowser;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-report-browser-'));
  await writeSyntheticRun(join(root, 'run'));
  reportFile = (await writeReport(join(root, 'run'), join(root, 'report.html'))).file;
  await mkdir(ARTEFACTS, { recursive: true });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rm(root, { recursive: true, force: true });
});

async function expectNothingRan(watched: WatchedPage): Promise<void> {
  expect(await watched.page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(watched.dialogs).toEqual([]);
  expect(watched.pageErrors).toEqual([]);
}

describe('the report in chromium', () => {
  it('loads with no console error and every chart has rendered marks', async () => {
    const watched = await browser.newPage();
    await watched.page.goto(pathToFileURL(reportFile).href, { waitUntil: 'load' });
    expect(watched.consoleErrors).toEqual([]);
    const charts = await watched.page.locator('figure.chart').evaluateAll((figures) =>
      figures.map((figure) => ({
        title: figure.querySelector('figcaption strong')?.textContent ?? '',
        // Vega puts a chart's data marks (bars, points, lines, rules, labels) under `role-mark` groups.
        marks: figure.querySelectorAll(
          'svg g.role-mark > path:not([d=""]), svg g.role-mark > line, svg g.role-mark > text',
        ).length,
        rows: figure.querySelectorAll('table.chart-data tbody tr').length,
      })),
    );
    expect(charts.length).toBeGreaterThanOrEqual(12);
    for (const chart of charts) {
      expect(chart.marks, chart.title).toBeGreaterThan(0);
      expect(chart.rows, chart.title).toBeGreaterThan(0);
    }
    // The payloads are on the page as text, where a reader sees them.
    const text = (await watched.page.locator('body').textContent()) ?? '';
    expect(text).toContain(PAYLOADS.script);
    expect(text).toContain(PAYLOADS.handler);
    await expectNothingRan(watched);
    await watched.page.screenshot({ path: join(ARTEFACTS, 'report.png'), fullPage: true });
    await watched.page.close();
  }, 120_000);

  it('runs none of the payloads even without its content security policy', async () => {
    const page = await readFile(reportFile, 'utf8');
    const withoutPolicy = page.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, '');
    expect(withoutPolicy).not.toContain('Content-Security-Policy');
    const watched = await browser.newPage();
    await watched.page.setContent(withoutPolicy, { waitUntil: 'load' });
    await expectNothingRan(watched);
    // Clicking every link the page has would follow a `javascript:` one, if any had survived.
    for (const link of await watched.page.locator('a').all()) await link.click();
    await expectNothingRan(watched);
    expect(await watched.page.locator('script, img, iframe, object, embed, foreignObject').count()).toBe(0);
    await watched.page.close();
  }, 120_000);
});
