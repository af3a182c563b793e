import type { LoopGenerationCoverage } from '../records/loop-search-coverage.js';
import type { OutsideGenerationCoverage } from '../records/search-coverage-figure.js';
import type { HtmlValue, SafeHtml } from '../html/html.js';
import { chart, dataTable } from './chart.js';
import { formatCount, formatInterval, formatNumber, formatPercent } from './format.js';

/**
 * The search coverage figures as the report and `mass compare` draw them: the cumulative share of tasks with a
 * winning design by search iteration (the paper's Figures 4 and 7), one line per series and measure with its exact
 * interval as a band, and the tables of how soon each task first won.
 */

/** One curve: a generation (the report) or a run's generation (`mass compare`), by one measure. */
export interface CoverageSeries {
  /** The line's colour: what is compared (e.g. `L1`, or `strong-judge L0`). */
  series: string;
  /** The line's dash: whose verdict makes a win (the loop's own judge, or an evaluation's external judges). */
  measure: string;
  coverage: LoopGenerationCoverage | OutsideGenerationCoverage;
}

export const LOOP_MEASURE = "loop's own judge";

export function outsideMeasure(evaluation: string): string {
  return `external judges (evaluation ${evaluation})`;
}

/** The cumulative curves in one chart, with the numbers it draws as a table under it. */
export async function coverageChart(title: string, series: readonly CoverageSeries[]): Promise<SafeHtml> {
  const values = series.flatMap(({ series: name, measure, coverage }) =>
    coverage.curve.map((point) => ({
      series: name,
      measure,
      iteration: point.iteration,
      share: point.share,
      lower: point.interval.lower,
      upper: point.interval.upper,
      won: point.won,
      tasks: point.tasks,
    })),
  );
  const x = {
    field: 'iteration',
    type: 'quantitative',
    title: 'search iteration (0: v0, the task’s own design)',
    axis: { tickMinStep: 1, format: 'd' },
  };
  const colour = { field: 'series', type: 'nominal', title: null };
  const dash = { field: 'measure', type: 'nominal', title: 'a win by' };
  return chart({
    title,
    caption:
      'the share of tasks whose search had found a winning design by each iteration; the band is its exact (Clopper–Pearson) 95 % interval over tasks, and a task never won stays in the denominator',
    values,
    spec: {
      width: 560,
      height: 280,
      layer: [
        {
          mark: { type: 'area', opacity: 0.1, interpolate: 'step-after' },
          encoding: {
            x,
            y: { field: 'lower', type: 'quantitative' },
            y2: { field: 'upper' },
            color: colour,
            detail: dash,
          },
        },
        {
          mark: { type: 'line', interpolate: 'step-after', point: true },
          encoding: {
            x,
            y: {
              field: 'share',
              type: 'quantitative',
              scale: { domain: [0, 1] },
              axis: { format: '%' },
              title: 'tasks with a winning design',
            },
            color: colour,
            strokeDash: dash,
          },
        },
      ],
    },
    table: {
      columns: ['series', 'a win by', 'iteration', 'tasks won', 'share', '95 % interval'],
      rows: values.map((row) => [
        row.series,
        row.measure,
        String(row.iteration),
        `${formatCount(row.won)} of ${formatCount(row.tasks)}`,
        formatPercent(row.share),
        formatInterval({ lower: row.lower, upper: row.upper }),
      ]),
    },
  });
}

/** Per series and measure: tasks won, censored, the median first win with its interval, champion changes. */
export function firstWinSummaryTable(series: readonly CoverageSeries[]): SafeHtml {
  return dataTable({
    columns: [
      'series',
      'a win by',
      'tasks',
      'won (never: censored)',
      'median iteration of the first win',
      'its interval (coverage)',
      'mean champion changes per task [95 % bootstrap]',
    ],
    rows: series.map(({ series: name, measure, coverage }) => {
      const { summary } = coverage;
      const last = lastIteration(coverage);
      const median = summary.median;
      return [
        name,
        measure,
        formatCount(summary.tasks),
        `${formatCount(summary.won)} (${formatCount(summary.censored)})`,
        median ? iterationText(median.median, last) : '—',
        median
          ? `[${iterationText(median.interval.lower, last)}, ${iterationText(median.interval.upper, last)}] (${formatPercent(median.coverage)})`
          : '—',
        'championChanges' in coverage
          ? `${formatNumber(coverage.championChanges.mean, 2)} ${formatInterval(coverage.championChanges.interval, 2)}`
          : '—',
      ];
    }),
  });
}

/** Per task: the first winning iteration by each series and measure (`> n` when it never won in n iterations). */
export function firstWinTaskTable(series: readonly CoverageSeries[]): SafeHtml {
  const rows: HtmlValue[][] = series.flatMap(({ series: name, measure, coverage }) =>
    coverage.tasks.map((task) => [
      name,
      measure,
      task.task,
      formatCount(task.iterationsRun),
      iterationText(task.firstWin, task.iterationsRun - 1),
      'championChanges' in task ? formatCount(task.championChanges) : '—',
      'versions' in task ? versionVotes(task.versions) : '—',
    ]),
  );
  return dataTable({
    columns: [
      'series',
      'a win by',
      'task',
      'iterations run',
      'first win',
      'champion changes',
      'external judges per version (wins-ties-losses, failed)',
    ],
    rows,
  });
}

/** An iteration, or `> last` for one after the last iteration run (a censored task, or a bound not reached). */
export function iterationText(iteration: number | null, last: number): string {
  return iteration === null ? `> ${last}` : String(iteration);
}

function lastIteration(coverage: { tasks: ReadonlyArray<{ iterationsRun: number }> }): number {
  return Math.max(0, ...coverage.tasks.map((task) => task.iterationsRun - 1));
}

function versionVotes(versions: OutsideGenerationCoverage['tasks'][number]['versions']): string {
  return versions
    .map((version) =>
      version.episode === 'failed'
        ? `${version.version}: episode failed`
        : `${version.version}: ${version.wins}-${version.ties}-${version.losses}${version.failed > 0 ? `, ${version.failed} failed` : ''}${version.unanimous ? ' ✓' : ''}`,
    )
    .join('; ');
}
