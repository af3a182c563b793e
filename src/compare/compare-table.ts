import type { LoopGenerationCoverage } from '../records/loop-search-coverage.js';
import type { OutsideGenerationCoverage } from '../records/search-coverage-figure.js';
import { iterationText, LOOP_MEASURE, outsideMeasure } from '../report/coverage-chart.js';
import type { ComparedRun } from './compared-run.js';
import { textTable } from '../text-table.js';

/** One curve of the comparison: a run's generation by one measure. */
export interface ComparedCurve {
  run: string;
  generation: string;
  measure: string;
  coverage: LoopGenerationCoverage | OutsideGenerationCoverage;
}

/** Every curve of the runs, in their order: per run and generation, the loop's own, then each outside one. */
export function comparedCurves(runs: readonly ComparedRun[]): ComparedCurve[] {
  return runs.flatMap((run) =>
    run.generations.flatMap((generation) => [
      { run: run.label, generation: generation.generation, measure: LOOP_MEASURE, coverage: generation.loop },
      ...generation.outside.map((outside) => ({
        run: run.label,
        generation: generation.generation,
        measure: outsideMeasure(outside.evaluation),
        coverage: outside.coverage,
      })),
    ]),
  );
}

/**
 * The comparison as a terminal prints it: who played each role in each run; per run, generation and measure the
 * tasks won, the median iteration of the first win with its interval, and the champion changes; then the cumulative
 * curves, tasks won of tasks at each iteration.
 */
export function describeComparison(runs: readonly ComparedRun[]): string {
  const lines: string[] = ['Runs compared (who played each role):'];
  lines.push(
    ...textTable(
      ['run', 'executor', 'judge', 'optimizer', 'directory'],
      runs.map((run) => [run.label, run.roles.executor, run.roles.judge, run.roles.optimizer, run.directory]),
    ).map((line) => `  ${line}`),
  );
  const curves = comparedCurves(runs);
  lines.push(
    '',
    'How soon the search found a winning design (intervals at 95 % over tasks: the median by order statistics, exact; ' +
      'champion changes by a bootstrap; "> n": not within the n iterations run, a task never won counts as censored):',
  );
  lines.push(
    ...textTable(
      [
        'run',
        'generation',
        'a win by',
        'tasks won',
        'median first win [interval]',
        'champion changes [interval]',
      ],
      curves.map(({ run, generation, measure, coverage }) => {
        const { summary } = coverage;
        const last = Math.max(0, ...coverage.tasks.map((task) => task.iterationsRun - 1));
        const median = summary.median;
        return [
          run,
          generation,
          measure,
          `${summary.won} of ${summary.tasks} (${summary.censored} censored)`,
          median
            ? `${iterationText(median.median, last)} [${iterationText(median.interval.lower, last)}, ${iterationText(median.interval.upper, last)}]`
            : '—',
          'championChanges' in coverage && coverage.championChanges.mean !== null
            ? `${coverage.championChanges.mean.toFixed(2)}${coverage.championChanges.interval ? ` [${coverage.championChanges.interval.lower.toFixed(2)}, ${coverage.championChanges.interval.upper.toFixed(2)}]` : ''}`
            : '—',
        ];
      }),
    ).map((line) => `  ${line}`),
  );
  const last = Math.max(
    -1,
    ...curves.flatMap(({ coverage }) => coverage.curve.map((point) => point.iteration)),
  );
  if (last >= 0) {
    lines.push('', 'Tasks with a winning design by search iteration (cumulative; 0 is v0):');
    const iterations = Array.from({ length: last + 1 }, (_, iteration) => iteration);
    lines.push(
      ...textTable(
        ['run', 'generation', 'a win by', ...iterations.map(String)],
        curves.map(({ run, generation, measure, coverage }) => [
          run,
          generation,
          measure,
          ...iterations.map((iteration) => {
            const point = coverage.curve.find((entry) => entry.iteration === iteration);
            return point ? `${point.won}/${point.tasks}` : '';
          }),
        ]),
      ).map((line) => `  ${line}`),
    );
  }
  const notes = runs.flatMap((run) => run.notes.map((note) => `${run.label}: ${note}`));
  if (notes.length > 0) lines.push('', 'Left out:', ...notes.map((note) => `  ${note}`));
  return lines.join('\n');
}
