import type { EvaluationSummary } from '../records/evaluation-records.js';
import { interval, number, rate, record, type SummaryWording } from './summary-wording.js';

/** Per comparison the win rate of each judge and the oracle, per task and pooled, with intervals and sign tests. */
export function describeWinRates(summary: EvaluationSummary, wording: SummaryWording): string[] {
  const { judgeName, modelName, level, omitted } = wording;
  const lines = [
    '',
    `Win rate W/(W+L) over episode pairs (a pair's verdict is the mean of its judgments; the unit of every interval ` +
      `and test): per task with its exact ${level} interval and sign-test p, pooled with a bootstrap over pairs ` +
      `within tasks widened to the exact interval; pairs won-lost-tied, then the judgments and the official W/(W+L) over them`,
  ];
  if (omitted('oracle-win-rates')) lines.push(`  No oracle row: ${omitted('oracle-win-rates')}`);
  for (const comparison of summary.figures.winRates) {
    lines.push(
      `  ${modelName(comparison.candidate)} against ${modelName(comparison.baseline)}, ${comparison.condition}:`,
    );
    for (const judge of comparison.judges) {
      lines.push(`    ${judgeName(judge.judge)}:`);
      for (const cell of [...judge.perTask, { task: 'pooled', ...judge.pooled }]) {
        lines.push(
          `      ${cell.task.padEnd(20)} ${rate(cell.winRate).padStart(5)} ${interval(cell.winRateInterval).padEnd(10)}` +
            ` p ${number(cell.signTestP, 2).padEnd(4)}  ${record(cell)} of ${cell.pairs} pairs; ` +
            `judgments ${record(cell.judgments)}, official ${rate(cell.judgments.winRate)}`,
        );
      }
    }
  }
  return lines;
}

/** How often the two orders of one pair and seed disagree, per judge; not measured when a pair is shown one way. */
export function describeOrderInconsistency(
  summary: EvaluationSummary,
  { judgeName }: SummaryWording,
): string[] {
  const inBothOrders = summary.figures.orderInconsistency.filter((judge) => judge.pairsInBothOrders > 0);
  if (summary.settings.orders !== 'both') {
    return [
      '',
      `Order inconsistency: not measured (orders: ${summary.settings.orders} shows each pair to a judge in one order per seed)`,
    ];
  }
  if (inBothOrders.length === 0) return [];
  return [
    '',
    'Order inconsistency (the two orders of one pair and seed disagree; mean over pairs):',
    ...inBothOrders.map(
      (judge) =>
        `  ${judgeName(judge.judge).padEnd(22)} ${rate(judge.rate)} ${interval(judge.rateWilson)} over ${judge.pairsInBothOrders} pairs ` +
        `(${judge.inconsistent} of ${judge.seedsInBothOrders} seeds disagree)`,
    ),
  ];
}
