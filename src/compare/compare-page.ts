import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { byGenerationName } from '../records/loop-search-coverage.js';
import { html, type SafeHtml } from '../html/html.js';
import { dataTable } from '../report/chart.js';
import {
  coverageChart,
  firstWinSummaryTable,
  firstWinTaskTable,
  type CoverageSeries,
} from '../report/coverage-chart.js';
import { page } from '../report/page.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { ComparedRun } from './compared-run.js';
import { comparedCurves } from './compare-table.js';

/**
 * `mass compare --out`: the runs' search coverage side by side as one self-contained HTML page, made like the
 * report (`src/report/page.ts`: inline style, charts as SVG drawn here, no script, a content security policy that
 * forbids scripts and fetches; every text from a record is escaped). One chart per generation puts the runs' curves
 * together (the paper's Figure 7: the same loop with a stronger judge, or judge and optimizer).
 */
export async function renderComparePage(
  runs: readonly ComparedRun[],
  generatedAt = new Date(),
): Promise<string> {
  const curves = comparedCurves(runs);
  const generations = [...new Set(curves.map((curve) => curve.generation))].sort(byGenerationName);
  const perGeneration: SafeHtml[] = [];
  for (const generation of generations) {
    const series: CoverageSeries[] = curves
      .filter((curve) => curve.generation === generation)
      .map((curve) => ({ series: curve.run, measure: curve.measure, coverage: curve.coverage }));
    perGeneration.push(
      html`<h3>Generation ${generation}</h3>
        ${await coverageChart(`Tasks with a winning design by search iteration, ${generation}`, series)}
        ${firstWinSummaryTable(series)}
        <details>
          <summary>Every task’s first win, ${generation}</summary>
          ${firstWinTaskTable(series)}
        </details>`,
    );
  }
  const notes = runs.flatMap((run) => run.notes.map((note) => `${run.label}: ${note}`));
  const body = html`${
      notes.length > 0
        ? html`<section class="notes" id="notes">
            <h2>Not shown</h2>
            <ul>
              ${notes.map((note) => html`<li>${note}</li>`)}
            </ul>
          </section>`
        : ''
    }
    <section id="runs">
      <h2>Runs</h2>
      <p>
        Who played each role, as each run’s configuration names it (a role without a model of its own plays
        the executor’s).
      </p>
      ${dataTable({
        columns: ['run', 'executor', 'judge', 'optimizer', 'generations searched', 'directory'],
        rows: runs.map((run) => [
          run.label,
          run.roles.executor,
          run.roles.judge,
          run.roles.optimizer,
          run.generations.map((generation) => generation.generation).join(', ') || '—',
          run.directory,
        ]),
      })}
    </section>
    <section id="coverage">
      <h2>How soon each run’s search found a winning design</h2>
      <p>
        Per generation, the cumulative share of tasks whose search had found a winning design: by the loop’s
        own judge (its champion left the bare-task reference), and where an evaluation judged the searches
        from outside (<code>evaluation.searchCoverage</code>), at the first version every external judgment
        preferred to the reference. A task never won is censored: it stays in every share and counts as later
        than any iteration (“&gt; n”). Intervals over tasks at 95 %: Clopper–Pearson for each share, order
        statistics for the median (exact for any distribution; its own coverage beside it), a percentile
        bootstrap for mean champion changes.
      </p>
      ${perGeneration.length > 0 ? perGeneration : html`<p class="empty">No run has a finished search.</p>`}
    </section>`;
  return page({
    title: `mass compare: ${runs.map((run) => run.label).join(' · ')}`,
    subtitle: `${runs.length} run(s) · generated ${generatedAt.toISOString()}`,
    nav: [
      ['runs', 'Runs'],
      ['coverage', 'Search coverage'],
      ...(notes.length > 0 ? ([['notes', `Not shown (${notes.length})`]] as Array<[string, string]>) : []),
    ],
    body,
  });
}

/** Writes the page; returns its absolute path. */
export async function writeComparePage(runs: readonly ComparedRun[], out: string): Promise<string> {
  const file = resolve(out);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, await renderComparePage(runs));
  return file;
}
