import { isDeepStrictEqual } from 'node:util';

import { DESIGN_FORM_NAMES, diffWorkflows, renderWorkflowDiff } from '../workflow/workflow-diff.js';
import { designForm, draftGaps, isFreeTextDesign, type TeamDesign } from '../workflow/workflow.js';
import { comparisonPoints } from './comparison-points.js';
import { renderExecutionMetadata, type ExecutionMetadata } from './execution-metadata.js';
import type { ComparedDesign, PairwiseComparison } from './history.js';
import { judgeCriteriaSection, type JudgeCriteria } from './judge-criteria.js';
import { nextMatchSection, type NextMatch } from './next-match.js';
import { SYSTEM_PROMPT } from './optimizer-instructions.js';
import { recurringProblems } from './recurring-problems.js';

export { REPLY_FORMAT } from './optimizer-instructions.js';

/** Everything the optimizer is shown for one proposal. */
export interface OptimizerInput {
  task: {
    id: string;
    /** The task as the team sees it (`renderTaskPrompt`). */
    prompt: string;
  };
  /** The design to improve: usually the latest candidate, or the champion. */
  current: { label: string; design: TeamDesign };
  /**
   * The champion so far and the judge's rationale for its promotion (empty when there is none): a design, the
   * current one included, or `null` for the bare-task reference run, which is champion until a design beats it.
   */
  previousBest?: { label: string; design: TeamDesign | null; rationale: string };
  /** The task's own v0 design: free text, a draft or a complete workflow. */
  original: TeamDesign;
  /** A short description of the current design's workspace (files, preflight, excerpts), written by the caller. */
  workspaceEvidence?: string;
  /** What the judge values: its lens, the task's focus and the rubric (`judgeCriteria`). */
  judge?: JudgeCriteria;
  /** Whom the next design is judged against, and what it takes to become the best. */
  nextMatch?: NextMatch;
  /**
   * A bounded excerpt of the workspace the next design is judged against, when that is not the current design's:
   * prepared as the judge's bundle is, within the optimizer's evidence budget.
   */
  opponentEvidence?: { label: string; text: string; tokens: number };
  /** How the current design's run went. */
  execution?: ExecutionMetadata;
  /** Every judged comparison so far, oldest first. */
  history: PairwiseComparison[];
}

export interface OptimizerPromptOptions {
  /** Comparisons shown in full, the most recent ones (default 12); the checklist still counts them all. */
  historyLimit?: number;
  /** The stabiliser's bound on the share of the design that may change (0–1), stated in the prompt. */
  maxChangeFraction?: number;
}

export interface OptimizerPrompt {
  system: string;
  user: string;
}

const DEFAULT_HISTORY_LIMIT = 12;

export function buildOptimizerPrompt(
  input: OptimizerInput,
  options: OptimizerPromptOptions = {},
): OptimizerPrompt {
  const historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  const opponent = opponentWorkspace(input);
  const sections = [
    `# Task (${input.task.id})\n\n${input.task.prompt.trim()}`,
    ...(input.judge ? [judgeCriteriaSection(input.judge)] : []),
    ...(input.nextMatch ? [nextMatchSection(input.nextMatch, opponent.where)] : []),
    `# Current design (${input.current.label})\n\n${designBlock(input.current.design)}${formNote(input.current.design)}`,
    `# How the current design's run went\n\n${input.execution ? renderExecutionMetadata(input.execution) : 'No execution record was given.'}`,
    `# Workspace of the current design (${input.current.label})\n\n${input.workspaceEvidence?.trim() || 'None was given.'}`,
    ...(opponent.section ? [opponent.section] : []),
    previousBestSection(input, historyLimit),
    originalSection(input),
    historySection(input.history, historyLimit, input.current.label),
    checklistSection(input.history),
  ];
  if (options.maxChangeFraction !== undefined && designForm(input.current.design) === 'structured') {
    sections.push(changeBoundSection(options.maxChangeFraction));
  }
  sections.push(`# Your answer\n\n${answerRequest(input.current.label, input.current.design)}`);
  return { system: SYSTEM_PROMPT, user: sections.join('\n\n') };
}

/**
 * The design as the optimizer should write it back: JSON without the schema version, small objects on one line. A
 * free-text design is shown as written, in a fence longer than any run of backticks inside it.
 */
export function designBlock(design: TeamDesign): string {
  if (isFreeTextDesign(design)) {
    const longestRun = Math.max(2, ...[...design.text.matchAll(/`+/g)].map((match) => match[0].length));
    const fence = '`'.repeat(longestRun + 1);
    return `${fence}text\n${design.text.trimEnd()}\n${fence}`;
  }
  const { schemaVersion: _schemaVersion, ...body } = design;
  return `\`\`\`json\n${compactJson(body, '')}\n\`\`\``;
}

/** What the optimizer must know about a design that is not yet in the structured form its reply must have. */
function formNote(design: TeamDesign): string {
  switch (designForm(design)) {
    case 'structured':
      return '';
    case 'free-text':
      return "\n\nThis design is free text, as the task's author wrote it: it has no structured form yet. Your reply must nevertheless give the design in the structured JSON form of your instructions (agents with a kind, role, instruction and, for every subagent, a contract; hops), keeping what the text asks for that the evidence does not argue against.";
    case 'draft':
      return `\n\nThis design is not complete yet: ${draftGaps(design).join('; ')}. Your reply must give the complete design: a contract for every subagent and the hops, every subagent in at least one.`;
  }
}

function answerRequest(label: string, design: TeamDesign): string {
  const reply =
    'Return the JSON object described in your instructions: the complete design, then changes, why, evidence_used, expected_impact and verification_checks.';
  switch (designForm(design)) {
    case 'structured':
      return `Improve the current design (${label}). ${reply}`;
    case 'free-text':
      return `Write the current design (${label}, free text) in the structured form and improve it. Agent ids use lowercase letters, digits and hyphens (write \`agent_data_curator\` as \`agent-data-curator\`). ${reply}`;
    case 'draft':
      return `Complete the current design (${label}) with the contracts and hops it lacks, and improve it. ${reply}`;
  }
}

const ONE_LINE_CHARACTERS = 110;

/** Pretty JSON that keeps objects and lists short enough on one line: about half the tokens of two-space JSON. */
function compactJson(value: unknown, indent: string): string {
  const flat = oneLineJson(value);
  if (value === null || typeof value !== 'object' || flat.length + indent.length <= ONE_LINE_CHARACTERS)
    return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    return `[\n${value.map((item) => inner + compactJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  const members = Object.entries(value)
    .filter(([, item]) => item !== undefined)
    .map(([key, item]) => `${inner}${JSON.stringify(key)}: ${compactJson(item, inner)}`);
  return `{\n${members.join(',\n')}\n${indent}}`;
}

function oneLineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(oneLineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${members.map(([key, item]) => `${JSON.stringify(key)}: ${oneLineJson(item)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** Where the optimizer sees the workspace the next design is judged against. */
function opponentWorkspace(input: OptimizerInput): { where: 'current' | 'below' | 'none'; section?: string } {
  const label = input.nextMatch?.opponent.label;
  if (label === undefined) return { where: 'none' };
  if (label === input.current.label) return { where: 'current' };
  const evidence = input.opponentEvidence;
  if (!evidence || evidence.label !== label || evidence.text.trim() === '') return { where: 'none' };
  return {
    where: 'below',
    section: `# Workspace of ${label}, which the next design is judged against\n\nAn excerpt, prepared as the judge's bundle is, shorter:\n\n${evidence.text.trim()}`,
  };
}

function previousBestSection(input: OptimizerInput, historyLimit: number): string {
  const best = input.previousBest;
  if (!best) {
    return input.history.length === 0
      ? '# Best design so far\n\nNo design has been judged yet.'
      : '# Best design so far\n\nNot given; the comparison history below says who won each comparison.';
  }
  if (best.design === null) return bareReferenceSection(best.label, input.history);
  const rationale = promotion(best, input.history, historyLimit);
  if (isDeepStrictEqual(best.design, input.current.design)) {
    return `# Best design so far\n\nThe current design (${input.current.label}) is the best so far.${rationale}`;
  }
  const fromBest = `Differences from ${best.label} to the current design:\n\n${designChange(best.design, input.current.design)}`;
  if (isDeepStrictEqual(best.design, input.original)) {
    return `# Best design so far (${best.label})\n\nThe original design (v0, below) is the best so far.${rationale}\n\n${fromBest}`;
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
): string {
  const index = history.findLastIndex(
    (comparison) => comparison.candidate.label === best.label && comparison.winner === 'candidate',
  );
  if (index < 0) return best.rationale.trim() ? ` The judge's rationale:\n\n${quote(best.rationale)}` : '';
  const number = index + 1;
  if (number > history.length - historyLimit) {
    return ` It won comparison ${number}; the history below gives the judge's reasons.`;
  }
  const comparison = history[index]!;
  return ` It won comparison ${number} (${comparison.candidate.label} against ${comparison.opponent.label}), which is too old for the history below. The judge's reasons:\n\n${rationaleBlocks(comparison).join('\n\n')}`;
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

function originalSection(input: OptimizerInput): string {
  if (isDeepStrictEqual(input.original, input.current.design)) {
    return `# Original design (v0)\n\nThe current design is the original one.`;
  }
  const drift = designChange(input.original, input.current.design);
  return `# Original design (v0)\n\n${designBlock(input.original)}\n\nChanges from v0 to the current design:\n\n${drift}`;
}

function historySection(history: PairwiseComparison[], limit: number, currentLabel: string): string {
  if (history.length === 0) return '# Comparison history\n\nNo comparisons yet.';
  const shown = history.slice(-limit);
  const firstNumber = history.length - shown.length + 1;
  const parts = ['# Comparison history (oldest first)'];
  if (firstNumber > 1) {
    const omitted = firstNumber - 1;
    parts.push(
      `${omitted} earlier ${omitted === 1 ? 'comparison is' : 'comparisons are'} not shown; the checklist below counts ${omitted === 1 ? 'it' : 'them'} too.`,
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
  // The current design's run is described once, above.
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

function designDifference(from: ComparedDesign, to: ComparedDesign): string {
  if (from.design && to.design) return designChange(from.design, to.design);
  if (!from.design && !to.design) return 'Both ran the bare task without a workflow.';
  const bare = from.design ? to.label : from.label;
  return `${bare} ran the bare task without a workflow, so there is no design to compare.`;
}

/**
 * The diff of two designs for the prompt. A rewrite between free text and a structure is said in one line: both
 * texts line by line would repeat designs the prompt shows anyway.
 */
function designChange(from: TeamDesign, to: TeamDesign): string {
  const diff = diffWorkflows(from, to);
  const rewrite = diff.changes.find((change) => change.type === 'design-rewritten');
  if (!rewrite) return renderWorkflowDiff(diff);
  const what =
    rewrite.fromForm === rewrite.toForm
      ? `The ${DESIGN_FORM_NAMES[rewrite.fromForm]} was rewritten`
      : `The design was rewritten from ${DESIGN_FORM_NAMES[rewrite.fromForm]} into ${DESIGN_FORM_NAMES[rewrite.toForm]}`;
  return `${what}: ${Math.round(diff.size.fraction * 100)}% of the words differ, as the orchestrator reads the two (${diff.size.changedUnits} of ${diff.size.totalUnits} words).`;
}

function checklistSection(history: PairwiseComparison[]): string {
  const problems = recurringProblems(history);
  if (problems.length === 0) return '# Recurring problems\n\nNone so far.';
  return `# Recurring problems (address each one, or say in "why" why not)\n\n${problems.map((problem) => `- [ ] ${problem.text}`).join('\n')}`;
}

function changeBoundSection(maxChangeFraction: number): string {
  const percent = Math.round(maxChangeFraction * 100);
  return `# How much may change\n\n${CHANGE_MEASURE} In this iteration change at most ${percent}% of the current design. Spend it on the changes the evidence supports most.`;
}

/** How change is measured, in words the optimizer can act on. */
export const CHANGE_MEASURE =
  "Change is measured over the units of the design: each agent's role, each instruction, each contract field, each check and each hop. An added or removed unit counts fully, a reworded text counts the share of its words that changed, a hop moved in the call order counts fully.";

function quote(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '> (empty)';
  return trimmed
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}
