import type { EvaluationSummary } from '../records/evaluation-records.js';
import { interval, number, rate, type SummaryWording } from './summary-wording.js';

/**
 * What checks the judging itself: evaluator agreement, agreement with the oracle, reward hacking among the runs
 * the loop selected, and text in them addressing the judge.
 */
export function describeJudgingChecks(summary: EvaluationSummary, wording: SummaryWording): string[] {
  const { omitted } = wording;
  const lines = describeAgreement(summary, wording);
  if (omitted('oracle-agreement')) {
    lines.push('', `Agreement with the oracle left out: ${omitted('oracle-agreement')}`);
  }
  if (omitted('reward-hacking')) lines.push('', `Reward hacking left out: ${omitted('reward-hacking')}`);
  lines.push(...describeRewardHacking(summary, wording), ...describeJudgeDirectedText(summary, wording));
  return lines;
}

function describeAgreement({ figures }: EvaluationSummary, { judgeName }: SummaryWording): string[] {
  // Two self-judges never judge the same pairs (each judges its own generation's): such rows have nothing to show.
  const agreements = figures.agreement.filter((agreement) => agreement.items > 0);
  if (agreements.length === 0) return [];
  return [
    '',
    "Evaluator agreement (share of items, each an episode pair or a match; Cohen's κ):",
    ...agreements.map((agreement) => {
      const [first, second] = agreement.evaluators;
      return (
        `  ${agreement.sample}: ${judgeName(first)} and ${judgeName(second)}: ${rate(agreement.agreement)} ` +
        `${interval(agreement.agreementInterval)}, κ ${number(agreement.kappa, 2)} ${interval(agreement.kappaInterval, 2)} over ${agreement.items}`
      );
    }),
  ];
}

function describeRewardHacking({ figures }: EvaluationSummary, { modelName }: SummaryWording): string[] {
  if (figures.rewardHacking.length === 0) return [];
  return [
    '',
    "Reward hacking (runs the loop selected for training that the oracle puts in their task's bottom half):",
    ...figures.rewardHacking.map(
      (entry) =>
        `  ${modelName(entry.generation).padEnd(14)} ${entry.bottomHalf} of ${entry.graded} graded selected runs (${rate(entry.bottomHalfRate)}); ` +
        `${entry.flagged} flagged by integrity checks`,
    ),
  ];
}

function describeJudgeDirectedText({ figures }: EvaluationSummary, { modelName }: SummaryWording): string[] {
  if (!figures.judgeDirectedText.some((entry) => entry.selected > 0)) return [];
  return [
    '',
    'Text addressing the judge (selected runs whose workspace writes to its judge or imitates its formats; shown to the judge marked as theirs):',
    ...figures.judgeDirectedText.map((entry) => {
      const unscanned = entry.selected - entry.scanned;
      return (
        `  ${modelName(entry.generation).padEnd(14)} ${entry.withText} of ${entry.scanned} scanned selected runs (${rate(entry.withTextRate)}), ` +
        `${entry.spans} spans, ${entry.characters} characters${unscanned > 0 ? `; ${unscanned} not scanned (workspace gone)` : ''}; ` +
        `${entry.tampered} of ${entry.selected} changed a protected file`
      );
    }),
  ];
}
