import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { html } from '../../src/html/html.js';
import { readRunForReport, renderReport } from '../../src/report/index.js';
import { rankedRuns } from '../../src/report/sections/outer-loop-section.js';
import {
  HOSTILE_SINGLE_AGENT_EPISODE,
  HOSTILE_TASK,
  PLAIN_TASK,
  runIds,
  writeOuterLoop,
  writeSyntheticRun,
} from './synthetic-run.js';

let root: string;
/** The synthetic run as it was: no task has a single-agent folder. */
let teamOnly: string;
/** The same run with each task also collected single-agent (`distill/L0/<task>/single-agent/`). */
let withSingleAgent: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-report-single-agent-'));
  teamOnly = join(root, 'team-only');
  withSingleAgent = join(root, 'with-single-agent');
  await writeSyntheticRun(teamOnly);
  await writeSyntheticRun(withSingleAgent);
  for (const task of [PLAIN_TASK, HOSTILE_TASK]) await writeOuterLoop(withSingleAgent, task, true);
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** The outer-loop section of a rendered report. */
function outerLoopSection(page: string): string {
  const start = page.indexOf('<section id="outer-loop">');
  expect(start).toBeGreaterThan(0);
  return page.slice(start, page.indexOf('</section>', start) + '</section>'.length);
}

/** A report's timestamps (when it was made, when a generation was registered) differ between two runs. */
function withoutTimes(page: string): string {
  return page.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME');
}

const LABEL = 'single-agent (no <code>agent</code> tool, no design)';

describe('the report shows each task’s single-agent collection beside the team’s', () => {
  it('reads the single-agent collection, ranking and selection under the task', async () => {
    const data = await readRunForReport(withSingleAgent);
    const loop = data.outerLoops.find((entry) => entry.task === PLAIN_TASK)!;
    expect(loop.collection?.condition).toBeUndefined();
    expect(loop.singleAgent).toMatchObject({ generation: 'L0', task: PLAIN_TASK });
    expect(loop.singleAgent!.collection).toMatchObject({ condition: 'single-agent', workflowHash: null });
    const ids = runIds(PLAIN_TASK, true);
    expect(
      rankedRuns(loop.singleAgent!, data.grades).map((run) => [run.episode, run.rank, run.place]),
    ).toEqual([
      [ids[0], 1, 'train'],
      [ids[1], 2, 'train'],
      [ids[2], 3, 'validation'],
      [ids[3], 4, 'excluded (below the cut)'],
      [ids[4], null, 'failed'],
      [ids[5], null, 'tampered'],
    ]);
    expect(data.notes).toEqual(["mass.db is missing: the run's wall time is unknown"]);
  });

  it('renders the single-agent part, labelled, right after the team’s part of the same task', async () => {
    const section = outerLoopSection(await renderReport(await readRunForReport(withSingleAgent)));
    const plain = section.indexOf(`<h3>L0 · ${PLAIN_TASK}</h3>`);
    const singleAgent = section.indexOf(`<h4>L0 · ${PLAIN_TASK}: ${LABEL}</h4>`);
    const hostile = section.indexOf(html`<h3>L0 · ${HOSTILE_TASK}</h3>`.markup);
    const hostileSingleAgent = section.indexOf(`<h4>L0 · ${html`${HOSTILE_TASK}`.markup}: ${LABEL}</h4>`);
    // Each task's single-agent part follows its team part, with no other heading between them.
    expect(plain).toBeGreaterThanOrEqual(0);
    expect(singleAgent).toBeGreaterThan(plain);
    expect(section.slice(plain + 1, singleAgent)).not.toMatch(/<h[34]>/);
    expect(hostile).toBeGreaterThanOrEqual(0);
    expect(hostileSingleAgent).toBeGreaterThan(hostile);
    expect(section.slice(hostile + 1, hostileSingleAgent)).not.toMatch(/<h[34]>/);

    const part = section.slice(singleAgent, plain < hostile ? hostile : undefined);
    expect(part).toContain(`Bradley–Terry strengths, L0 ${PLAIN_TASK}, single-agent`);
    expect(part).toContain('each single-agent run’s Bradley–Terry log-strength');
    const rows = [
      ...part.matchAll(
        /<tr>\s*<td>(\d+|—)<\/td>\s*<td>([^<]*)<\/td>(?:\s*<td>[^<]*<\/td>){3}\s*<td>([^<]*)<\/td>/g,
      ),
    ];
    expect(rows.map((row) => [row[1], row[2], row[3]])).toEqual([
      ['1', runIds(PLAIN_TASK, true)[0], 'train'],
      ['2', runIds(PLAIN_TASK, true)[1], 'train'],
      ['3', runIds(PLAIN_TASK, true)[2], 'validation'],
      ['4', runIds(PLAIN_TASK, true)[3], 'excluded (below the cut)'],
      ['—', runIds(PLAIN_TASK, true)[4], 'failed'],
      ['—', runIds(PLAIN_TASK, true)[5], 'tampered'],
    ]);
    // No run of the team's is in the single-agent part, and no single-agent run in the team's.
    expect(part).not.toContain('L0-distill-');
    expect(section.slice(plain, singleAgent)).not.toContain('L0-single-agent-distill-');
  });

  it('leaves the team’s parts as they were, and a run without single-agent folders shows none', async () => {
    const before = outerLoopSection(withoutTimes(await renderReport(await readRunForReport(teamOnly))));
    const after = outerLoopSection(withoutTimes(await renderReport(await readRunForReport(withSingleAgent))));
    expect(before).not.toContain('single-agent');
    expect(before).not.toContain('<h4>');
    // Each single-agent part runs from its heading to the next task's heading (or the end of the section).
    const teamParts = after.replace(/<h4>[\s\S]*?(?=<h3>|\s*<\/section>)/g, '');
    expect(teamParts).toBe(before);
  });

  it('keeps the payloads of single-agent episode ids as text', async () => {
    const page = await renderReport(await readRunForReport(withSingleAgent));
    expect(page).toContain(html`${HOSTILE_SINGLE_AGENT_EPISODE}`.markup);
    expect(page).not.toMatch(/<svg[^>]*onload/i);
    expect(page).not.toMatch(/<img/i);
    for (const [tag] of page.matchAll(/<[a-z][^>]*>/gi)) {
      expect(tag.replace(/"[^"]*"/g, '""')).not.toMatch(/\son[a-z]+\s*=/i);
    }
  });

  it('shows a single-agent collection stopped half-way, and names what is missing', async () => {
    const partial = join(root, 'partial');
    await writeSyntheticRun(partial);
    await writeOuterLoop(partial, PLAIN_TASK, true);
    await writeOuterLoop(partial, HOSTILE_TASK, true);
    const plainFolder = join(partial, 'distill', 'L0', PLAIN_TASK, 'single-agent');
    await rm(join(plainFolder, 'ranking.json'));
    await rm(join(plainFolder, 'selection.json'));
    // A collection cut off mid-write by a crash on a file system without atomic rename.
    await writeFile(
      join(partial, 'distill', 'L0', HOSTILE_TASK, 'single-agent', 'collection.json'),
      '{"schemaVersion": 1, "kind": "distill-coll',
    );
    const data = await readRunForReport(partial);
    const notes = data.notes.join('\n');
    expect(notes).toContain(
      `distill/L0/${PLAIN_TASK}/single-agent/ranking.json is missing: the tournament has not finished`,
    );
    expect(notes).toContain(`distill/L0/${HOSTILE_TASK}/single-agent/collection.json was left out`);
    const plain = data.outerLoops.find((entry) => entry.task === PLAIN_TASK)!;
    expect(rankedRuns(plain.singleAgent!, data.grades).map((run) => run.place)).toEqual(
      Array(6).fill('unranked'),
    );
    const section = outerLoopSection(await renderReport(data));
    const part = section.slice(section.indexOf(`<h4>L0 · ${PLAIN_TASK}: ${LABEL}</h4>`));
    expect(part).toMatch(/^<h4>[^]*?the tournament has not finished/);
    expect(part).toContain(`<td>${runIds(PLAIN_TASK, true)[0]}</td>`);
  });
});
