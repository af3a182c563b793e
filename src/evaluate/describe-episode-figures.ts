import type { EvaluationSummary } from '../records/evaluation-records.js';
import { interval, number, rate, signed, type SummaryWording } from './summary-wording.js';

/** Oracle grades, output tokens (and grade per token) and delegation, per generation and condition. */
export function describeEpisodeFigures(summary: EvaluationSummary, wording: SummaryWording): string[] {
  return [
    ...describeGrades(summary, wording),
    ...describeTokens(summary, wording),
    ...describeDelegation(summary, wording),
  ];
}

function describeGrades(
  { figures }: EvaluationSummary,
  { modelName, level, omitted, covered }: SummaryWording,
): string[] {
  const lines = [
    '',
    `Oracle grade (0–100; mean and ${level} interval), difference from the reference${covered}:`,
  ];
  if (omitted('grades')) lines.push(`  Left out: ${omitted('grades')}`);
  for (const grade of figures.grades) {
    const difference = figures.gradeDifferences.find(
      (entry) => entry.generation === grade.generation && entry.condition === grade.condition,
    );
    lines.push(
      `  ${modelName(grade.generation).padEnd(14)} ${grade.condition.padEnd(13)} ${number(grade.mean)} ${interval(grade.interval, 1)}` +
        ` (${grade.graded}/${grade.episodes} graded)` +
        (difference
          ? `; ${signed(difference.meanDifference)} ${interval(difference.interval, 1)} against ${difference.reference}`
          : ''),
    );
  }
  return lines;
}

function describeTokens(
  { figures }: EvaluationSummary,
  { modelName, omitted, covered }: SummaryWording,
): string[] {
  const perToken = omitted('grade-per-token');
  const lines = [
    '',
    perToken
      ? 'Output tokens per episode:'
      : `Output tokens per episode; oracle grade per 1,000 output tokens${covered}, ratio to the reference:`,
  ];
  if (perToken) lines.push(`  Grade per 1,000 output tokens left out: ${perToken}`);
  for (const tokens of figures.tokens) {
    lines.push(
      `  ${modelName(tokens.generation).padEnd(14)} ${tokens.condition.padEnd(13)} ${number(tokens.meanOutputTokens, 0)} tokens` +
        (perToken
          ? ''
          : `; ${number(tokens.gradePerThousandTokens, 2)} per 1,000` +
            (tokens.ratioToReference
              ? `; ×${number(tokens.ratioToReference.ratio, 2)} ${interval(tokens.ratioToReference.interval, 2)}`
              : '') +
            (tokens.ratioToSingleAgent
              ? `; ×${number(tokens.ratioToSingleAgent.ratio, 2)} against single-agent`
              : '')),
    );
  }
  return lines;
}

function describeDelegation({ figures }: EvaluationSummary, { modelName }: SummaryWording): string[] {
  return [
    '',
    'Delegation (episodes with at least one agent call; mean calls; mean subagent threads):',
    ...figures.delegation.map(
      (delegation) =>
        `  ${modelName(delegation.generation).padEnd(14)} ${delegation.condition.padEnd(13)} ${rate(delegation.rate)} ${interval(delegation.rateWilson)}` +
        `; ${number(delegation.meanDelegations, 2)}; ${number(delegation.meanSubagentThreads, 2)}`,
    ),
  ];
}
