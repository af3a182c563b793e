import type { SearchCoverageFigure } from '../records/search-coverage-figure.js';
import { interval } from './summary-wording.js';

/** How soon each generation's searches found a design the external judges prefer unanimously to the bare task. */
export function describeSearchCoverage(coverage: SearchCoverageFigure): string[] {
  const lines = [
    '',
    `Search coverage (the paper's Figure 4): tasks whose search had a design every judgment of ` +
      `${coverage.judges.join(', ')} (${coverage.judgeSeeds} seed${coverage.judgeSeeds === 1 ? '' : 's'} each) prefers ` +
      `to the bare-task reference, by iteration; exact interval over tasks at the last one:`,
  ];
  for (const generation of coverage.generations) {
    const last = generation.curve.at(-1);
    const lastIteration = Math.max(0, ...generation.tasks.map((task) => task.iterationsRun - 1));
    const median = generation.summary.median;
    lines.push(
      `  ${generation.generation}: ${generation.curve.map((point) => `${point.iteration}: ${point.won}/${point.tasks}`).join(', ')}` +
        (last ? ` ${interval(last.interval)}` : '') +
        (median
          ? `; median first win ${median.median === null ? `> ${lastIteration}` : median.median}` +
            ` (${generation.summary.censored} of ${generation.summary.tasks} never won)`
          : ''),
    );
  }
  return lines;
}
