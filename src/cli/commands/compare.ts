import type { Command } from 'commander';

import { writeComparePage } from '../../compare/compare-page.js';
import { describeComparison } from '../../compare/compare-table.js';
import { readComparedRuns } from '../../compare/compared-run.js';

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      "Puts several runs' workflow searches side by side (the paper's Figures 4 and 7): per run and generation, how soon each task's search found a winning design, by the loop's own judge and by an evaluation's external judges",
    )
    .argument('<run-dir...>', 'run directories (e.g. runs/qwen3-search runs/strong-judge)')
    .option('--out <file>', 'also write the comparison as one self-contained HTML page, with the charts')
    .option('--json', 'print the comparison as JSON')
    .action(async (directories: string[], options: { out?: string; json?: boolean }) => {
      const runs = await readComparedRuns(directories);
      if (options.json)
        console.log(JSON.stringify({ schemaVersion: 1, kind: 'search-comparison', runs }, null, 2));
      else console.log(describeComparison(runs));
      if (options.out) {
        const file = await writeComparePage(runs, options.out);
        console.error(`mass compare: the page is ${file}`);
      } else if (!options.json) {
        console.error('mass compare: add --out <file.html> for the page with the charts');
      }
    });
}
