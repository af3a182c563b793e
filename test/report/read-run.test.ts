import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { html } from '../../src/html/html.js';
import { renderSvg } from '../../src/report/chart.js';
import { readRunForReport, renderReport, writeReport } from '../../src/report/index.js';
import { assertInertSvg } from '../../src/report/inert-svg.js';
import { winRatePoints } from '../../src/report/sections/evaluation-section.js';
import { iterationVerdict } from '../../src/report/sections/inner-loop-section.js';
import { rankedRuns } from '../../src/report/sections/outer-loop-section.js';
import { HOSTILE_EPISODE, HOSTILE_TASK, PAYLOADS, PLAIN_TASK, writeSyntheticRun } from './synthetic-run.js';

let root: string;
let run: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-report-'));
  run = join(root, 'run');
  await writeSyntheticRun(run);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('the report reads a run directory through its record schemas', () => {
  it('extracts generations, champion histories, the selection cut with grades, tokens and the evaluation', async () => {
    const data = await readRunForReport(run);
    expect(data.name).toBe('synthetic');
    expect(
      data.generations.map((generation) => [generation.name, generation.parent, generation.servedAs]),
    ).toEqual([
      ['L0', null, 'base-model'],
      ['L1', 'L0', 'base-model-L1'],
    ]);
    expect(data.searches.map((search) => search.task).sort()).toEqual([PLAIN_TASK, HOSTILE_TASK].sort());
    const search = data.searches.find((entry) => entry.task === PLAIN_TASK)!;
    expect(search.iterations.map(iterationVerdict)).toEqual(['won', 'won', 'lost', 'failed']);

    const loop = data.outerLoops.find((entry) => entry.task === PLAIN_TASK)!;
    const runs = rankedRuns(loop, data.grades);
    expect(runs.map((entry) => [entry.episode.slice(-1), entry.rank, entry.place, entry.grade])).toEqual([
      ['0', 1, 'train', 80],
      ['1', 2, 'train', 60],
      ['2', 3, 'validation', null],
      ['3', 4, 'excluded (below the cut)', undefined],
      ['4', null, 'failed', undefined],
      ['5', null, 'tampered', undefined],
    ]);
    expect(runs[0]).toMatchObject({ score: 1.2, lower: 1.2 - 0.8, upper: 1.2 + 0.8, record: '3–1–0' });
    const hostileLoop = data.outerLoops.find((entry) => entry.task === HOSTILE_TASK)!;
    expect(rankedRuns(hostileLoop, data.grades)[0]!.episode).toBe(HOSTILE_EPISODE);

    // The one episode record is the executor's, served as base-model, so counted under L0; each task's search has a
    // verdict of two judge calls and an optimizer call.
    // Records from before costs, and no prices: every call's cost is unknown, none is counted as 0.
    const unknown = (calls: number) => ({
      usd: 0,
      reportedUsd: 0,
      computedUsd: 0,
      pricedCalls: 0,
      unpricedCalls: calls,
    });
    expect(data.tokens).toEqual([
      {
        stage: 'L0',
        role: 'executor',
        calls: 4,
        promptTokens: 5000,
        completionTokens: 700,
        cost: unknown(4),
      },
      { stage: 'L0', role: 'judge', calls: 4, promptTokens: 4000, completionTokens: 400, cost: unknown(4) },
      {
        stage: 'L0',
        role: 'optimizer',
        calls: 2,
        promptTokens: 6000,
        completionTokens: 600,
        cost: unknown(2),
      },
    ]);
    expect(data.datasets.map((dataset) => dataset.stats.splits.train.total.supervisedTokens)).toEqual([6000]);
    expect(data.evaluations.map((evaluation) => evaluation.name)).toEqual(['final']);
    const points = winRatePoints(data.evaluations[0]!.summary.figures.winRates[0]!);
    const pooled = points.find((point) => point.task === 'pooled' && point.judge.startsWith('judge'))!;
    expect([pooled.wins, pooled.ties, pooled.losses]).toEqual([6, 2, 4]);
    expect(pooled.lower).toBeLessThan(pooled.winRate!);
    expect(pooled.upper).toBeGreaterThan(pooled.winRate!);
    expect(data.notes).toEqual(["mass.db is missing: the run's wall time is unknown"]);
  });

  it('reports a run stopped half-way: what is missing is listed, nothing throws', async () => {
    const partial = join(root, 'partial');
    await writeSyntheticRun(partial);
    await rm(join(partial, 'distill', 'L0', PLAIN_TASK, 'ranking.json'));
    await rm(join(partial, 'distill', 'L0', PLAIN_TASK, 'selection.json'));
    await rm(join(partial, 'evaluation', 'final', 'summary.json'));
    await rm(join(partial, 'train', 'registry.json'));
    // A search result cut off mid-write by a crash on a file system without atomic rename.
    await writeFile(
      join(partial, 'search', 'L0', HOSTILE_TASK, 'result.json'),
      '{"schemaVersion": 1, "kind": "task-se',
    );
    // A grade row being appended when the report was made.
    await appendFile(
      join(partial, 'evaluation', 'final', 'grades.jsonl'),
      '{"schemaVersion": 1, "kind": "evalu',
    );
    const data = await readRunForReport(partial);
    const notes = data.notes.join('\n');
    expect(notes).toContain('evaluation/final/grades.jsonl: its last line is unfinished');
    expect([...data.grades.values()]).toEqual([80, 60, null]);
    expect(notes).toContain(
      `distill/L0/${PLAIN_TASK}/ranking.json is missing: the tournament has not finished`,
    );
    expect(notes).toContain('evaluation/final/summary.json is missing');
    expect(notes).toContain('train/registry.json is missing');
    expect(notes).toContain(`search/L0/${HOSTILE_TASK}/result.json was left out`);
    expect(data.searches.map((search) => search.task)).toEqual([PLAIN_TASK]);
    const page = await renderReport(data);
    expect(page).toContain('Not shown');
    expect(page).toContain('This run has no finished evaluation');
    expect(page).toContain('No generation is registered yet');
  });

  it('refuses a path that is not a directory with a clear error', async () => {
    await expect(writeReport(join(root, 'nowhere'))).rejects.toThrow(UserError);
    await expect(writeReport(join(root, 'nowhere'))).rejects.toThrow(
      /is not a directory: give the run directory/,
    );
  });
});

describe('what a model or agent wrote reaches the page only as text', () => {
  it('escapes every payload, keeps no markup from records and leaves no secret from the configuration', async () => {
    const { file } = await writeReport(run, join(root, 'report.html'));
    const page = await readFile(file, 'utf8');
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toMatch(/<a\s+href="javascript:/i);
    expect(page).not.toMatch(/<svg[^>]*onload/i);
    // Every element's attributes are the report's own: no event handler anywhere (quoted values hold text).
    for (const [tag] of page.matchAll(/<[a-z][^>]*>/gi)) {
      expect(tag.replace(/"[^"]*"/g, '""')).not.toMatch(/\son[a-z]+\s*=/i);
    }
    expect(page).toContain('&lt;script&gt;window.__pwned = &quot;script&quot;&lt;/script&gt;');
    expect(page).toContain(html`${PAYLOADS.handler}`.markup);
    expect(page).not.toContain('secret-password');
    expect(page).toContain('Content-Security-Policy');
  });

  it('vega draws labels from data as escaped text', async () => {
    const svg = await renderSvg({
      data: {
        values: [
          { task: PAYLOADS.script, value: 1 },
          { task: PAYLOADS.handler, value: 2 },
        ],
      },
      mark: 'bar',
      encoding: { y: { field: 'task', type: 'nominal' }, x: { field: 'value', type: 'quantitative' } },
    });
    expect(svg).toContain('&lt;script&gt;window.__pwned');
    expect(svg).toContain('&lt;img src=x onerror=');
    expect(svg).not.toMatch(/<script|<img/);
  });

  it('refuses an SVG holding a script, a handler or a link', () => {
    expect(() =>
      assertInertSvg('<svg><text aria-label="x onload=y">a onclick="b"</text></svg>'),
    ).not.toThrow();
    expect(() => assertInertSvg('<svg><script>1</script></svg>')).toThrow(/<script>/);
    expect(() => assertInertSvg('<svg><g onload="1"></g></svg>')).toThrow(/"onload"/);
    expect(() => assertInertSvg('<svg><a href="javascript:1">x</a></svg>')).toThrow(/<a>/);
    expect(() => assertInertSvg('<svg><path xlink:href="#x"/></svg>')).toThrow(/xlink:href/);
  });
});
