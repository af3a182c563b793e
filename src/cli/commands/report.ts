import type { Command } from 'commander';

import { writeReport } from '../../report/index.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'One self-contained HTML file showing a run: configuration, searches, tournaments, training data, evaluation',
    )
    .argument('<run-dir>', 'the run directory (e.g. runs/demo)')
    .option('--out <file>', 'where to write it (default: <run-dir>/report.html)')
    .action(async (runDirectory: string, options: { out?: string }) => {
      const report = await writeReport(runDirectory, options.out);
      if (report.notes.length > 0) {
        console.error(
          `mass report: ${report.notes.length} file(s) missing or unreadable, listed under "Not shown"`,
        );
      }
      console.log(report.file);
    });
}
