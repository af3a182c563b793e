import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EvaluationSummaryRecord } from '../../src/records/evaluation-records.js';
import { outsideGenerationCoverage } from '../../src/records/search-coverage-figure.js';
import { readRunForReport, renderReport } from '../../src/report/index.js';
import { searchCoverageSection } from '../../src/report/sections/search-coverage-section.js';
import { HOSTILE_TASK, PLAIN_TASK, writeSyntheticRun } from './synthetic-run.js';

let root: string;
let run: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-report-coverage-'));
  run = join(root, 'run');
  await writeSyntheticRun(run);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('the report’s search coverage section', () => {
  it('draws the loop’s own curve per generation, and says when no evaluation judged the searches', async () => {
    const markup = (await searchCoverageSection(await readRunForReport(run))).markup;
    expect(markup).toContain('id="search-coverage"');
    expect(markup).toContain('No evaluation judged the searches from outside');
    // The synthetic searches kept v0 from iteration 0: both tasks won at once, by the loop's own judge.
    expect(markup).toContain('<td>L0</td><td>loop&#39;s own judge</td><td>0</td><td>2 of 2</td>');
    expect(markup).not.toContain('<img src=x');
    expect(markup).toContain('task&lt;img src=x onerror=window.__pwned=1&gt;');
  });

  it('adds an evaluation’s outside curve beside it, and the report links to the section', async () => {
    const file = join(run, 'evaluation', 'final', 'summary.json');
    const summary = await EvaluationSummaryRecord.read(file);
    const generation = outsideGenerationCoverage({
      generation: 'L0',
      confidence: 0.95,
      unfinished: [],
      tasks: [PLAIN_TASK, HOSTILE_TASK].map((task, index) => ({
        task,
        iterationsRun: 4,
        loopFirstWin: 0,
        versions: [
          { iteration: 0, version: 'v0', episodeFailed: false, outcomes: [index === 0 ? 'win' : 'tie'] },
        ],
      })),
    });
    await EvaluationSummaryRecord.write(file, {
      ...summary,
      searchCoverage: {
        confidence: 0.95,
        judges: ['claude'],
        judgeSeeds: 1,
        generations: [generation],
        counts: { judgments: 2, failedJudgments: 0, failedEpisodes: 0 },
      },
    });
    const data = await readRunForReport(run);
    const markup = (await searchCoverageSection(data)).markup;
    expect(markup).toContain('Judged from outside by evaluation final: claude × 1 seed(s)');
    expect(markup).toContain(
      '<td>L0</td><td>external judges (evaluation final)</td><td>0</td><td>1 of 2</td>',
    );
    expect(markup).toContain('v0: 1-0-0 ✓');
    const report = await renderReport(data);
    expect(report).toContain('href="#search-coverage"');
  });
});
