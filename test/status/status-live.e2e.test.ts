// `mass status` and the live viewer on a real toy search (one demo task: the reference, v0 and one judgment): killed
// while its first episodes run, `mass status --json` counts exactly what mass.db, work-plan.jsonl and the episode
// folders hold; then, with the viewer's run page open in chromium, the search is resumed to its end, and the page
// follows it without a reload and with no console error, under the run page's policy; `mass status` then says finished.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { describeCost } from '../../src/cost/cost-total.js';
import type { RunStatus } from '../../src/status/run-status.js';
import { placeOfStep } from '../../src/status/step-place.js';
import { LIVE_PAGE_POLICY } from '../../src/view/live-script.js';
import { startViewer, type RunningViewer } from '../../src/view/index.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { runMass, startMass } from '../support/cli.js';
import { TOY_SEARCH_CONFIG } from '../support/shared-runs.js';

/** Screenshots are kept for people to look at (git-ignored). */
const ARTEFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'status');

let root: string;
let runs: string;
let run: string;
let configFile: string;
let browser: TestBrowser | undefined;
let viewer: RunningViewer | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-status-e2e-'));
  runs = join(root, 'runs');
  run = join(runs, 'status-live');
  configFile = join(root, 'status-live.yaml');
  await writeFile(configFile, TOY_SEARCH_CONFIG.replace('name: toy-search', 'name: status-live'));
  await mkdir(ARTEFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await rm(root, { recursive: true, force: true });
});

async function status(): Promise<RunStatus> {
  const result = await runMass(['status', run, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as RunStatus;
}

/** Per group and kind, the done, failed and started steps mass.db holds. */
function recordedCounts(): Map<string, { done: number; failed: number; started: number }> {
  const database = new Database(join(run, 'mass.db'), { readonly: true });
  try {
    const counts = new Map<string, { done: number; failed: number; started: number }>();
    for (const row of database.prepare('SELECT key, status FROM steps').all() as Array<{
      key: string;
      status: string;
    }>) {
      const place = placeOfStep(row.key);
      const key = `${place.group} ${place.kind}`;
      const count = counts.get(key) ?? { done: 0, failed: 0, started: 0 };
      if (row.status === 'done') count.done++;
      else if (row.status === 'failed') count.failed++;
      else count.started++;
      counts.set(key, count);
    }
    return counts;
  } finally {
    database.close();
  }
}

/** The status's counts equal mass.db's, its in-flight episodes are the folders without episode.json. */
function expectCountsMatchRecords(result: RunStatus, alive: boolean): void {
  const recorded = recordedCounts();
  const shown = new Map<string, { done: number; failed: number; started: number }>();
  for (const stage of result.stages) {
    for (const group of stage.groups) {
      for (const kind of group.kinds) {
        if (kind.done + kind.failed + kind.inFlight === 0 && !recorded.has(`${group.group} ${kind.kind}`))
          continue;
        const started = recorded.get(`${group.group} ${kind.kind}`)?.started ?? 0;
        shown.set(`${group.group} ${kind.kind}`, {
          done: kind.done,
          failed: kind.failed,
          started: alive ? kind.inFlight : started,
        });
      }
    }
  }
  expect(shown).toEqual(recorded);
  const episodes = join(run, 'episodes');
  const unfinished = readdirSync(episodes).filter((id) => !existsSync(join(episodes, id, 'episode.json')));
  expect(result.inFlight.episodes.map((episode) => episode.id).sort()).toEqual(unfinished.sort());
  for (const episode of result.inFlight.episodes) {
    const log = join(episodes, episode.id, 'requests.jsonl');
    const rows = existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter((line) => line !== '').length
      : 0;
    expect(episode.calls, episode.id).toBe(rows);
  }
}

describe('mass status and the live viewer on a toy search', () => {
  it('killed while its episodes run: the counts are the records’ and nothing is said to be in flight', async () => {
    const { child, finished } = startMass(['search', '--config', configFile, '--runs', runs]);
    const log = join(run, 'episodes', 'L0-demo-volatility-reference', 'requests.jsonl');
    for (let waited = 0; waited < 120_000; waited += 100) {
      if (existsSync(log) && readFileSync(log, 'utf8').length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const running = await status();
    expect(running.run.state).toBe('running');
    expect(running.inFlight.episodes.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await finished;

    const stopped = await status();
    expect(stopped.run.state).toBe('stopped');
    expect(stopped.stages[0]!.groups[0]!.kinds).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'episode', planned: 2, inFlight: 0 }),
        expect.objectContaining({ kind: 'judge', planned: 1 }),
      ]),
    );
    expect(stopped.inFlight.episodes.every((episode) => episode.state === 'stopped')).toBe(true);
    expectCountsMatchRecords(stopped, false);
  }, 180_000);

  it('resumed with the run page open: the page follows it to the end, with no console error', async () => {
    viewer = await startViewer({ directory: run, port: 0 });
    browser = await launchBrowser();
    const watched = await browser.newPage();
    const response = await watched.page.goto(viewer.url);
    expect(response?.headers()['content-security-policy']).toBe(LIVE_PAGE_POLICY);
    const section = watched.page.locator('#live-status');
    expect(await section.getAttribute('data-state')).toBe('stopped');
    const before = await section.innerText();

    const resumed = await runMass(['search', '--config', configFile, '--runs', runs]);
    expect(resumed.code, resumed.stderr).toBe(0);
    await watched.page.locator('#live-status[data-state="finished"]').waitFor({ timeout: 30_000 });
    const after = await section.innerText();
    expect(after).not.toBe(before);
    expect(after).toContain('2/2 episode');
    expect(after).toContain('no episode in flight');
    await watched.page.screenshot({ path: join(ARTEFACTS, 'live-run-page.png'), fullPage: true });
    expect(watched.consoleErrors).toEqual([]);
    expect(watched.pageErrors).toEqual([]);

    const done = await status();
    // The page's spending is the status's: each stage, generation and role the journal holds, with its calls.
    expect(done.spending?.groups.length).toBeGreaterThan(0);
    for (const group of done.spending!.groups) {
      expect(after).toMatch(
        new RegExp(
          `${group.stage}\\s+${group.label}\\s+${group.role}\\s+${escapeRegExp(describeCost(group.spentFigures.cost))}\\s.*\\s${group.spentFigures.calls}\\n`,
        ),
      );
    }
    expect(done.run.state).toBe('finished');
    expect(done.eta.remainingMs).toBe(0);
    expectCountsMatchRecords(done, false);
  }, 180_000);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
