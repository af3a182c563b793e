import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CollectionRecord } from '../../src/records/generation-records.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { html } from '../../src/html/html.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { respond } from '../../src/view/respond.js';
import { HOSTILE_SINGLE_AGENT_EPISODE, PAYLOADS, runIds, writeOuterLoop } from '../report/synthetic-run.js';
import { episodeRecord, GENERATION, TASK, writeViewerRun } from './synthetic-viewer-run.js';

let root: string;
/** The viewer's run with its task's team collection only. */
let teamOnly: string;
/** The same with the task also collected single-agent (`distill/L0/<task>/single-agent/`), one match judged. */
let withSingleAgent: string;
const singleAgentIds = runIds(TASK, true);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-view-single-agent-'));
  teamOnly = join(root, 'team-only');
  withSingleAgent = join(root, 'with-single-agent');
  for (const run of [teamOnly, withSingleAgent]) {
    await writeViewerRun(run);
    await writeOuterLoop(run, TASK);
  }
  await writeOuterLoop(withSingleAgent, TASK, true);
  const [a, b] = [singleAgentIds[0]!, singleAgentIds[1]!];
  const folder = join(withSingleAgent, 'distill', GENERATION, TASK, 'single-agent');
  // One more run whose id is a payload, as a damaged or forged collection could hold.
  const collection = (await CollectionRecord.readIfPresent(join(folder, 'collection.json')))!;
  collection.episodes.push({
    ...collection.episodes[0]!,
    episodeId: HOSTILE_SINGLE_AGENT_EPISODE,
    dir: `episodes/${HOSTILE_SINGLE_AGENT_EPISODE}`,
  });
  collection.successes += 1;
  await CollectionRecord.write(join(folder, 'collection.json'), collection);
  await writeFile(join(folder, 'matches.jsonl'), `${JSON.stringify({ a, b, winner: 'a' })}\n`);
  // The tournament's judgment of that match: the search's, relabelled with the two single-agent episodes.
  const judgment = (await PairwiseJudgmentRecord.readIfPresent(
    join(withSingleAgent, 'search', GENERATION, TASK, 'v1', 'judgments', 'v1-vs-v0.json'),
  ))!;
  await PairwiseJudgmentRecord.write(join(folder, 'matches', '0.json'), {
    ...judgment,
    x: { ...judgment.x, label: a },
    y: { ...judgment.y, label: b },
  });
  for (const id of [a, b]) {
    await mkdir(join(withSingleAgent, 'episodes', id, 'workspace'), { recursive: true });
    await EpisodeRecord.write(join(withSingleAgent, 'episodes', id, 'episode.json'), episodeRecord(id, null));
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function get(run: string, target: string) {
  const response = await respond(run, 'GET', target);
  expect(response.status, target).toBe(200);
  // Whitespace between tags and runs of spaces are layout, not content.
  return String(response.body).replace(/>\s+</g, '><').replace(/\s+/g, ' ');
}

function section(page: string, id: string): string {
  const start = page.indexOf(`<section id="${id}">`);
  expect(start, id).toBeGreaterThan(0);
  return page.slice(start, page.indexOf('</section>', start));
}

const LABEL = 'Single-agent (no <code>agent</code> tool, no design): runs and tournament';
/** A run whose workspace writes to its judge: counted, its file and line (and its payload, escaped) in the title. */
const JUDGE_DIRECTED_TEXT = `Note to the judge ${PAYLOADS.handler}`;
const JUDGE_DIRECTED_CELL = `<span class="bad" title="${html`report.md:3 ${JUDGE_DIRECTED_TEXT}`.markup}">1 span, ${JUDGE_DIRECTED_TEXT.length} characters</span>`;

describe('mass view: a task’s single-agent collection', () => {
  it('the task page lists the single-agent runs, each linked, with strength, rank and selection', async () => {
    const page = await get(withSingleAgent, `/generations/${GENERATION}/${TASK}/`);
    const part = section(page, 'single-agent');
    expect(part).toContain(`<h2>${LABEL}</h2>`);
    const expected = [
      ['success', 'no', 'none', '1.200 ± 0.800', '1', 'train'],
      ['success', 'no', JUDGE_DIRECTED_CELL, '0.400 ± 0.800', '2', 'train'],
      ['success', 'no', '', '-0.300 ± 0.800', '3', 'validation'],
      ['success', 'no', '', '-1.300 ± 0.800', '4', 'below-cut'],
      ['failure', 'no', '', '', '', 'failed'],
      ['success', '<span class="bad">tampered</span>', '', '', '', 'tampered'],
    ];
    singleAgentIds.forEach((id, index) => {
      const cells = expected[index]!.map((cell) => `<td>${cell}</td>`).join('');
      expect(part).toContain(`<tr><td><a href="/episodes/${id}/">${id}</a></td>${cells}</tr>`);
    });
    expect(part).toContain(
      `<td>${singleAgentIds[0]}</td><td>${singleAgentIds[1]}</td><td>a</td><td><a href="/compare?x=episodes%2F${singleAgentIds[0]}&amp;y=episodes%2F${singleAgentIds[1]}">compare</a></td>`,
    );
    // The team's section holds the team's runs only, and the single-agent section comes after it.
    const team = section(page, 'outer-loop');
    expect(team).toContain(`href="/episodes/${runIds(TASK)[0]}/"`);
    expect(team).not.toContain('single-agent');
    expect(part).not.toContain('L0-distill-');
    expect(page.indexOf('<section id="single-agent">')).toBeGreaterThan(
      page.indexOf('<section id="outer-loop">'),
    );
    // An id that is not a folder name is text, not a link, and its payload stays text.
    expect(part).toContain(`<tr><td>${html`${HOSTILE_SINGLE_AGENT_EPISODE}`.markup}</td><td>success</td>`);
    expect(page).not.toMatch(/<svg|<script|<img/i);
  });

  it('a task without a single-agent folder shows its team’s runs as before, and nothing single-agent', async () => {
    const before = await get(teamOnly, `/generations/${GENERATION}/${TASK}/`);
    const after = await get(withSingleAgent, `/generations/${GENERATION}/${TASK}/`);
    expect(before).not.toContain('single-agent');
    expect(before).not.toContain('Single-agent');
    expect(section(after, 'outer-loop')).toBe(section(before, 'outer-loop'));
    const generation = await get(teamOnly, `/generations/${GENERATION}/`);
    expect(generation).not.toMatch(/single-agent/i);
  });

  it('the generation page counts the single-agent runs beside the champion runs', async () => {
    const page = await get(withSingleAgent, `/generations/${GENERATION}/`);
    expect(page).toContain(
      '<th>champion runs (successful)</th><th>single-agent (no agent tool, no design) runs (successful)</th><th>search</th>',
    );
    expect(page).toContain('<td>5 of 6</td><td>6 of 7</td>');
  });

  it('the comparison of two single-agent runs shows their tournament judgment', async () => {
    const [a, b] = [singleAgentIds[0]!, singleAgentIds[1]!];
    const page = await get(withSingleAgent, `/compare?x=episodes/${a}&y=episodes/${b}`);
    expect(page).toContain(`<h3>distill/${GENERATION}/${TASK}/single-agent/matches/0.json</h3>`);
    expect(page).toContain(`Winner: <strong>x (${a})</strong>`);
  });
});
