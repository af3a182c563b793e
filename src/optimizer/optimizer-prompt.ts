import { isDeepStrictEqual } from 'node:util';

import type { FileExcerpt } from '../judge/bundle-sections.js';
import { escapePromptTags } from '../judge/prompt-tags.js';
import { renderSharedFiles, shareFiles, type SharedFiles } from '../judge/shared-files.js';
import { DESIGN_FORM_NAMES, diffWorkflows, renderWorkflowDiff } from '../workflow/workflow-diff.js';
import { designForm, draftGaps, isFreeTextDesign, type TeamDesign } from '../workflow/workflow.js';
import { comparisonPoints } from './comparison-points.js';
import { renderExecutionMetadata, type ExecutionMetadata } from './execution-metadata.js';
import type { ComparedDesign, PairwiseComparison } from './history.js';
import { judgeCriteriaSection, type JudgeCriteria } from './judge-criteria.js';
import { nextMatchSection, type NextMatch } from './next-match.js';
import { SYSTEM_PROMPT } from './optimizer-instructions.js';
import { recurringProblems } from './recurring-problems.js';
import { teamBudgetsSection, type TeamBudgets } from './team-budgets.js';

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
  /** The file excerpts `workspaceEvidence` holds (its bundle's), so that a file both workspaces have is shown once. */
  workspaceExcerpts?: readonly FileExcerpt[];
  /** What the judge values: its lens, the task's focus and the rubric (`judgeCriteria`). */
  judge?: JudgeCriteria;
  /** Whom the next design is judged against, and what it takes to become the best. */
  nextMatch?: NextMatch;
  /**
   * A bounded excerpt of the workspace the next design is judged against, when that is not the current design's:
   * prepared as the judge's bundle is, within the optimizer's evidence budget.
   */
  opponentEvidence?: { label: string; text: string; tokens: number; excerpts?: readonly FileExcerpt[] };
  /** What a run of the team may use, as the run configures its episodes. */
  budgets?: TeamBudgets;
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

/** The sections of the prompt, in the order it shows them. */
type SectionKey =
  | 'task'
  | 'criteria'
  | 'budgets'
  | 'nextMatch'
  | 'current'
  | 'execution'
  | 'shared'
  | 'currentWorkspace'
  | 'opponentWorkspace'
  | 'best'
  | 'original'
  | 'history'
  | 'checklist'
  | 'changeBound'
  | 'answer';

/**
 * Where a section is, seen from another: `below, in “Comparison history”`, the quoted title being how the section's
 * heading begins. Every place the prompt points to is worded by this, from the order the sections are shown in.
 */
export type Locate = (to: SectionKey) => string;

export function buildOptimizerPrompt(
  input: OptimizerInput,
  options: OptimizerPromptOptions = {},
): OptimizerPrompt {
  const historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  const workspaces = optimizerWorkspaces(input);
  const opponent = workspaces.opponent;
  const titles: Partial<Record<SectionKey, string>> = {
    task: `Task (${input.task.id})`,
    ...(input.judge ? { criteria: 'What the judge values' } : {}),
    ...(input.budgets ? { budgets: 'What a run of the team may use' } : {}),
    ...(input.nextMatch ? { nextMatch: 'The next comparison' } : {}),
    current: `Current design (${input.current.label})`,
    execution: "How the current design's run went",
    ...(workspaces.shared ? { shared: 'Files in both workspaces' } : {}),
    currentWorkspace: `Workspace of the current design (${input.current.label})`,
    ...(opponent.section ? { opponentWorkspace: `Workspace of ${opponent.label}` } : {}),
    best: 'Best design so far',
    original: 'Original design (v0)',
    history: 'Comparison history',
    checklist: 'Recurring problems',
    ...(options.maxChangeFraction !== undefined && designForm(input.current.design) === 'structured'
      ? { changeBound: 'How much may change' }
      : {}),
    answer: 'Your answer',
  };
  const order = (Object.keys(titles) as SectionKey[]).sort(
    (left, right) => SECTION_ORDER.indexOf(left) - SECTION_ORDER.indexOf(right),
  );
  const locateFrom =
    (from: SectionKey): Locate =>
    (to) => {
      if (!order.includes(to)) throw new Error(`optimizer prompt: no section "${to}" to point to`);
      return `${order.indexOf(to) < order.indexOf(from) ? 'above' : 'below'}, in “${titles[to]!}”`;
    };
  const render: Record<SectionKey, (locate: Locate) => string> = {
    task: () => `# ${titles.task!}\n\n${escapePromptTags(input.task.prompt.trim())}`,
    criteria: () => judgeCriteriaSection(input.judge!),
    budgets: () => teamBudgetsSection(input.budgets!),
    nextMatch: (locate) =>
      nextMatchSection(input.nextMatch!, {
        kind: opponent.where,
        location:
          opponent.where === 'current'
            ? locate('currentWorkspace')
            : opponent.where === 'excerpt'
              ? locate('opponentWorkspace')
              : '',
      }),
    current: () =>
      `# ${titles.current!}\n\n${designBlock(input.current.design)}${formNote(input.current.design)}`,
    execution: () =>
      `# ${titles.execution!}\n\n${input.execution ? renderExecutionMetadata(input.execution) : 'No execution record was given.'}`,
    shared: () =>
      `# ${titles.shared!}\n\n${escapePromptTags(renderSharedFiles(workspaces.shared!, workspaceSideNames(input.current.label, opponent.label)))}`,
    currentWorkspace: () =>
      `# ${titles.currentWorkspace!}\n\n${escapePromptTags(workspaces.current?.trim() || 'None was given.')}`,
    opponentWorkspace: () => opponent.section!,
    best: (locate) => previousBestSection(input, historyLimit, locate),
    original: () => originalSection(input),
    history: (locate) => historySection(input.history, historyLimit, input.current.label, locate),
    checklist: () => checklistSection(input.history),
    changeBound: () => changeBoundSection(options.maxChangeFraction!),
    answer: () => `# ${titles.answer!}\n\n${answerRequest(input.current.label, input.current.design)}`,
  };
  const user = order.map((key) => render[key](locateFrom(key))).join('\n\n');
  return { system: SYSTEM_PROMPT, user };
}

const SECTION_ORDER: readonly SectionKey[] = [
  'task',
  'criteria',
  'budgets',
  'nextMatch',
  'current',
  'execution',
  'shared',
  'currentWorkspace',
  'opponentWorkspace',
  'best',
  'original',
  'history',
  'checklist',
  'changeBound',
  'answer',
];

/** The names of the two workspaces where the files they share are shown. */
function workspaceSideNames(current: string, opponent: string) {
  return {
    a: { short: current, long: `the workspace of ${current}` },
    b: { short: opponent, long: `the workspace of ${opponent}` },
  };
}

export interface OptimizerWorkspaces {
  /** The current design's workspace as shown: without the files shown once. */
  current: string | undefined;
  /** The files both workspaces have, shown once (`shareFiles`, the judge's rule); absent when there are none. */
  shared?: SharedFiles;
  opponent: {
    where: 'current' | 'excerpt' | 'none';
    label: string;
    /** The opponent's workspace as shown, and its section. */
    text?: string;
    section?: string;
  };
}

/** The two workspaces the optimizer is shown, with the files they share taken out of each and shown once. */
export function optimizerWorkspaces(input: OptimizerInput): OptimizerWorkspaces {
  const label = input.nextMatch?.opponent.label ?? '';
  const current = input.workspaceEvidence;
  if (input.nextMatch === undefined) return { current, opponent: { where: 'none', label } };
  if (label === input.current.label) return { current, opponent: { where: 'current', label } };
  const evidence = input.opponentEvidence;
  if (!evidence || evidence.label !== label || evidence.text.trim() === '') {
    return { current, opponent: { where: 'none', label } };
  }
  let opponentText = evidence.text;
  let shownCurrent = current;
  let shared: SharedFiles | undefined;
  if (current !== undefined && input.workspaceExcerpts && evidence.excerpts) {
    const found = shareFiles(
      { text: current, excerpts: input.workspaceExcerpts },
      { text: evidence.text, excerpts: evidence.excerpts },
      { notes: SHARED_FILE_NOTES },
    );
    if (found.files.length > 0) {
      shared = found;
      shownCurrent = found.bundleA;
      opponentText = found.bundleB;
    }
  }
  return {
    current: shownCurrent,
    ...(shared ? { shared } : {}),
    opponent: {
      where: 'excerpt',
      label,
      text: opponentText.trim(),
      section: `# Workspace of ${label}, which the next design is judged against\n\nAn excerpt, prepared as the judge's bundle is, shorter:\n\n${escapePromptTags(opponentText.trim())}`,
    },
  };
}

/**
 * The note each workspace keeps in place of a file shown once. Both workspaces come after the shared files, so the
 * note points up to them (the prompt-order test checks it).
 */
const SHARED_FILE_NOTES = {
  same: '(the same in both workspaces: shown once, above, in “Files in both workspaces”)',
  differing:
    '(nearly the same in both workspaces: shown once, above, in “Files in both workspaces”, with the lines that differ)',
};

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

function previousBestSection(input: OptimizerInput, historyLimit: number, locate: Locate): string {
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

function originalSection(input: OptimizerInput): string {
  if (isDeepStrictEqual(input.original, input.current.design)) {
    return `# Original design (v0)\n\nThe current design is the original one.`;
  }
  const drift = designChange(input.original, input.current.design);
  return `# Original design (v0)\n\n${designBlock(input.original)}\n\nChanges from v0 to the current design:\n\n${drift}`;
}

function historySection(
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
