import { describeCost } from '../cost/cost-total.js';
import type { SpendingSummary } from '../cost/spending-summary.js';
import { describeEpisodeFigures } from './describe-episode-figures.js';
import { describeJudgingChecks } from './describe-judging-checks.js';
import { describeSearchCoverage } from './describe-search-coverage.js';
import { describeTransfer } from './describe-transfer.js';
import { describeOrderInconsistency, describeWinRates } from './describe-win-rates.js';
import type { EvaluationSummary } from '../records/evaluation-records.js';
import { summaryWording } from './summary-wording.js';

/**
 * The terminal summary of an evaluation: per comparison the win rate of each judge and the oracle, per task and
 * pooled, with intervals; then oracle grades, tokens, delegation, order inconsistency, agreement and reward hacking.
 * A figure left out because no task had a grader is named with its reason, never printed empty.
 * What a stand-in model (the toy model) made is marked with its label, e.g. "(toy)".
 */
export function describeEvaluation(summary: EvaluationSummary, directory: string): string {
  const { counts } = summary;
  const wording = summaryWording(summary);
  const { judgeName, modelName } = wording;
  const lines: string[] = [
    `Evaluation "${summary.name}" of run ${summary.run}: ${summary.models.map((model) => modelName(model.name)).join(', ')} ` +
      `on ${summary.tasks.join(', ')} (${summary.conditions.join(', ')}); judges: ${summary.judges.map((judge) => judgeName(judge.name)).join(', ') || 'none'}`,
    `  ${counts.episodes} episodes (${counts.failedEpisodes} failed), ${counts.judgments} judgments ` +
      `(${counts.repairedJudgments} repaired, ${counts.failedJudgments} failed and left out), ` +
      `${counts.grades} grades (${counts.failedGrades} failed)`,
    ...(summary.spending ? [describeSpending(summary.spending)] : []),
  ];
  const records = `Records: ${directory}/evaluation/${summary.name}/ (summary.json, judgments.jsonl, grades.jsonl, episodes/)`;
  // An evaluation of the recorded searches alone (comparisons: [] with searchCoverage) ran no episode.
  if (summary.comparisons.length === 0 && summary.searchCoverage) {
    return [...lines, ...describeSearchCoverage(summary.searchCoverage), '', records].join('\n');
  }
  const { grading } = summary.figures;
  if (grading.note) lines.push(`  Grading: ${grading.note}`);
  lines.push(...describeWinRates(summary, wording));
  for (const transfer of summary.transfer) lines.push(...describeTransfer(transfer));
  if (summary.searchCoverage) lines.push(...describeSearchCoverage(summary.searchCoverage));
  lines.push(
    ...describeOrderInconsistency(summary, wording),
    ...describeEpisodeFigures(summary, wording),
    ...describeJudgingChecks(summary, wording),
    '',
    records,
  );
  return lines.join('\n');
}

/** `  Spent: $0.0420 (reported); judge 12 calls, 48,000 tokens, $0.0300 (reported); executor …` */
function describeSpending(spending: SpendingSummary): string {
  const roles = Object.entries(spending.roles).map(
    ([role, spent]) =>
      `${role} ${spent.calls} calls, ${(spent.promptTokens + spent.completionTokens).toLocaleString('en-US')} tokens, ${describeCost(spent.cost)}`,
  );
  return `  Spent: ${describeCost(spending.total.cost)}${roles.length > 0 ? `; ${roles.join('; ')}` : ''}`;
}
