import { writeComparePage } from '../../compare/compare-page.js';
import { describeComparison } from '../../compare/compare-table.js';
import { readComparedRuns } from '../../compare/compared-run.js';

export async function compareAction(
  directories: string[],
  options: { out?: string; json?: boolean },
): Promise<void> {
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
}
