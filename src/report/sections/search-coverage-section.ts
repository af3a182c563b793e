import { loopSearchCoverage } from '../../records/loop-search-coverage.js';
import { html, type SafeHtml } from '../../html/html.js';
import {
  coverageChart,
  firstWinSummaryTable,
  firstWinTaskTable,
  LOOP_MEASURE,
  outsideMeasure,
  type CoverageSeries,
} from '../coverage-chart.js';
import type { RunReportData } from '../read-run.js';

/**
 * How soon each generation's searches found a winning design (the paper's Figure 4): by the loop's own judge, from
 * the search records, and, where an evaluation judged the searches from outside (`evaluation.searchCoverage`), by
 * its external judges. A later generation whose curve rises sooner is an optimizer that finds winners faster.
 */
export async function searchCoverageSection(data: RunReportData): Promise<SafeHtml> {
  const series: CoverageSeries[] = loopSearchCoverage(data.searches).map((coverage) => ({
    series: coverage.generation,
    measure: LOOP_MEASURE,
    coverage,
  }));
  for (const { name, summary } of data.evaluations) {
    for (const coverage of summary.searchCoverage?.generations ?? []) {
      series.push({ series: coverage.generation, measure: outsideMeasure(name), coverage });
    }
  }
  const judgedBy = data.evaluations.flatMap(({ name, summary }) =>
    summary.searchCoverage
      ? [
          `evaluation ${name}: ${summary.searchCoverage.judges.join(', ')} × ${summary.searchCoverage.judgeSeeds} seed(s); ${summary.searchCoverage.counts.judgments} judgments (${summary.searchCoverage.counts.failedJudgments} failed)`,
        ]
      : [],
  );
  return html`<section id="search-coverage">
    <h2>How soon the search finds a winning design</h2>
    ${
      series.length === 0
        ? html`<p class="empty">
            No search has finished yet (search/&lt;generation&gt;/&lt;task&gt;/result.json).
          </p>`
        : html`<p>
              A task’s search has found a winning design once its champion leaves the bare-task reference (the
              loop’s own judge), or, judged from outside, at the first version every external judgment prefers
              to the reference. Tasks that never won are censored: they stay in every share and count as later
              than any iteration. <code>mass compare</code> puts several runs side by side (the paper’s Figure
              7).
            </p>
            ${
              judgedBy.length > 0
                ? html`<p class="muted">Judged from outside by ${judgedBy.join('; ')}.</p>`
                : html`<p class="muted">
                    No evaluation judged the searches from outside; <code>evaluation.searchCoverage</code> in
                    <code>mass eval</code> adds that measure.
                  </p>`
            }
            ${await coverageChart('Tasks with a winning design, by search iteration', series)}
            <h3>First wins per generation</h3>
            ${firstWinSummaryTable(series)}
            <details>
              <summary>Every task’s first win</summary>
              ${firstWinTaskTable(series)}
            </details>`
    }
  </section>`;
}
