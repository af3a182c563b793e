import { isDeepStrictEqual } from 'node:util';

import { comparisonPoints } from './comparison-points.js';
import { renderExecutionMetadata } from './execution-metadata.js';
import type { ComparedDesign, PairwiseComparison } from '../records/optimizer-history.js';
import type { Locate, OptimizerInput } from './optimizer-prompt.js';
import { designBlock, designChange, designDifference } from './prompt-designs.js';
import { recurringProblems } from './recurring-problems.js';

// The optimizer prompt's sections from the comparison history: the best design so far and why, the comparisons
// themselves with the judge's reasons, and the checklist of recurring problems.

export function previousBestSection(input: OptimizerInput, historyLimit: number, locate: Locate): string {
  const best = input.previousBest;
  if (!best) {
    return input.history.length === 0
      ? '# Best design so far\n\nNo design has been judged yet.'
      : `# Best design so far\n\nNot given; the comparison history (${locate('history')}) says who won each comparison.`;
  }
  if (best.design === null) return bareReferenceSection(best.label, input.history);
  const rationale = promotion(best, input.history, historyLimit, locate);
  if (isDeepStrictEqual(best.design, input.current.design)) {
    return `# Best design so far\n\nThe current design (${input.current.label}) is the best so far.${rationale}`;
  }
  const fromBest = `Differences from ${best.label} to the current design:\n\n${designChange(best.design, input.current.design)}`;
  if (isDeepStrictEqual(best.design, input.original)) {
    return `# Best design so far (${best.label})\n\nThe original design (v0, ${locate('original')}) is the best so far.${rationale}\n\n${fromBest}`;
  }
  return `# Best design so far (${best.label})\n\n${designBlock(best.design)}${rationale ? `\n\n${rationale.trimStart()}` : ''}\n\n${fromBest}`;
}

/**
 * Why the best design is the best: the comparison it won, referred to by number when the history shows it (its
 * rationale is quoted there), else quoted here with the judge's A/B positions. A rationale given without its
 * comparison is quoted as it is.
 */
function promotion(
  best: NonNullable<OptimizerInput['previousBest']>,
  history: PairwiseComparison[],
  historyLimit: number,
  locate: Locate,
): string {
  const index = history.findLastIndex(
    (comparison) => comparison.candidate.label === best.label && comparison.winner === 'candidate',
  );
  if (index < 0) return best.rationale.trim() ? ` The judge's rationale:\n\n${quote(best.rationale)}` : '';
  const number = index + 1;
  if (number > history.length - historyLimit) {
    return ` It won comparison ${number}; the history (${locate('history')}) gives the judge's reasons.`;
  }
  const comparison = history[index]!;
  return ` It won comparison ${number} (${comparison.candidate.label} against ${comparison.opponent.label}), which is too old for the history (${locate('history')}). The judge's reasons:\n\n${rationaleBlocks(comparison).join('\n\n')}`;
}

/**
 * The champion is still the bare-task reference: no design has beaten one agent given only the task. Said with the
 * comparisons that kept it there, so the optimizer reads the same story here as in the history.
 */
function bareReferenceSection(label: string, history: PairwiseComparison[]): string {
  const defended = history
    .map((comparison, index) => ({ comparison, number: index + 1 }))
    .filter(({ comparison }) => comparison.opponent.label === label && comparison.winner !== 'candidate');
  const lines = [
    `# Best design so far (${label})`,
    '',
    `The best so far is the ${label} run: the bare task, solved without any workflow. No design has beaten it yet.`,
  ];
  if (defended.length > 0) {
    const outcomes = defended.map(
      ({ comparison, number }) =>
        `${comparison.candidate.label} ${comparison.winner === 'tie' ? 'tied with it (a tie keeps the champion)' : 'lost to it'} (comparison ${number})`,
    );
    lines.push('', `${joinWords(outcomes)}.`);
  }
  return lines.join('\n');
}

function joinWords(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`;
}

export function historySection(
  history: PairwiseComparison[],
  limit: number,
  currentLabel: string,
  locate: Locate,
): string {
  if (history.length === 0) return '# Comparison history\n\nNo comparisons yet.';
  const shown = history.slice(-limit);
  const firstNumber = history.length - shown.length + 1;
  const parts = ['# Comparison history (oldest first)'];
  if (firstNumber > 1) {
    const omitted = firstNumber - 1;
    parts.push(
      `${omitted} earlier ${omitted === 1 ? 'comparison is' : 'comparisons are'} not shown; the checklist of recurring problems (${locate('checklist')}) counts ${omitted === 1 ? 'it' : 'them'} too.`,
    );
  }
  shown.forEach((comparison, index) =>
    parts.push(renderComparison(comparison, firstNumber + index, currentLabel)),
  );
  return parts.join('\n\n');
}

function renderComparison(comparison: PairwiseComparison, number: number, currentLabel: string): string {
  const { candidate, opponent } = comparison;
  const winner =
    comparison.winner === 'tie'
      ? 'tie'
      : comparison.winner === 'candidate'
        ? `${candidate.label} (the candidate)`
        : `${opponent.label} (the opponent)`;
  const lines = [`## ${number}. ${candidate.label} against ${opponent.label}: winner ${winner}`];
  for (const block of rationaleBlocks(comparison)) lines.push('', block);
  const orders = comparison.orders ?? [];
  const position =
    orders.length > 0
      ? 'both orders'
      : comparison.candidatePosition && `workspace ${comparison.candidatePosition}`;
  const against = comparisonPoints(comparison, 'candidate');
  const where = position ? ` (${position})` : '';
  lines.push(
    '',
    against.source === 'rationale'
      ? `Points against ${candidate.label}${where}, found in the rationale (the verdict listed none):`
      : `The judge's points against ${candidate.label}${where}:`,
  );
  if (against.points.length === 0) lines.push('(none)');
  else lines.push(...against.points.map((point) => `- ${point}`));
  const opponentPoints = comparisonPoints(comparison, 'opponent');
  if (opponentPoints.points.length > 0) {
    lines.push(
      '',
      `The judge's points against ${opponent.label}, where it fell short:`,
      ...opponentPoints.points.map((point) => `- ${point}`),
    );
  }
  lines.push(
    '',
    `Design differences (${opponent.label} → ${candidate.label}):`,
    '',
    designDifference(opponent, candidate),
  );
  // The current design's run is described once, in its own section.
  if (comparison.candidateExecution && candidate.label !== currentLabel) {
    lines.push('', `Run of ${candidate.label}:`, renderExecutionMetadata(comparison.candidateExecution));
  }
  return lines.join('\n');
}

/** The judge's rationale of a comparison, each order's with the workspace each side was shown as. */
function rationaleBlocks(comparison: PairwiseComparison): string[] {
  const { candidate, opponent } = comparison;
  const orders = comparison.orders ?? [];
  if (orders.length > 0) {
    return orders.map(
      (order, index) =>
        `Rationale, order ${index + 1} of ${orders.length} (${positionsIn(order.candidatePosition, candidate, opponent)}):\n\n${quote(order.rationale)}`,
    );
  }
  const position = comparison.candidatePosition;
  const positions = position ? ` (${positionsIn(position, candidate, opponent)})` : '';
  return [`Rationale${positions}:\n\n${quote(comparison.rationale)}`];
}

function positionsIn(position: 'A' | 'B', candidate: ComparedDesign, opponent: ComparedDesign): string {
  return `in it, workspace ${position} is ${candidate.label}, workspace ${position === 'A' ? 'B' : 'A'} is ${opponent.label}`;
}

export function checklistSection(history: PairwiseComparison[]): string {
  const problems = recurringProblems(history);
  if (problems.length === 0) return '# Recurring problems\n\nNone so far.';
  return `# Recurring problems (address each one, or say in "why" why not)\n\n${problems.map((problem) => `- [ ] ${problem.text}`).join('\n')}`;
}

function quote(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '> (empty)';
  return trimmed
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}
