import { isDeepStrictEqual } from 'node:util';

import { DESIGN_FORM_NAMES, diffWorkflows, renderWorkflowDiff } from '../workflow/workflow-diff.js';
import { designForm, draftGaps, isFreeTextDesign, type TeamDesign } from '../workflow/workflow.js';
import { comparisonActionablePoints } from './actionable-sentences.js';
import { renderExecutionMetadata, type ExecutionMetadata } from './execution-metadata.js';
import type { ComparedDesign, PairwiseComparison } from './history.js';
import { recurringProblems } from './recurring-problems.js';

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

export const REPLY_FORMAT = `Reply with one JSON object and nothing else (no Markdown around it):

{
  "design": { "agents": [ ... ], "hops": [ ... ] },
  "changes": ["one line per change: which agent, contract or hop, and what changed"],
  "why": "why these changes should produce a workspace the judge prefers",
  "evidence_used": ["the rationale sentence, checklist item or fact behind each change"],
  "expected_impact": "what should look different in the next workspace",
  "verification_checks": ["how the next run shows whether each change worked"]
}

"design" is the complete new workflow, not a patch:
- "agents": objects with "id" (lowercase letters, digits, hyphens), "kind" ("orchestrator" for exactly one agent, "subagent" for the rest), "role", "instruction", and for every subagent a "contract".
- "contract": {"fields": [...], "checks": [...]}. A field is {"name", "type", "description"} where type is one of string, number, integer, boolean, path, list, object; only an object field has "fields", a list of fields of the other types (one level). A check is {"name", "description"}: something the agent must verify and report as true or false. Names are identifiers (letters, digits, underscores).
- "hops": the call order, objects {"from", "to"} with an optional "condition" (a hop taken only when it holds, such as a return to an earlier agent for re-work). Every subagent appears in at least one hop; no hop goes from an agent to itself.
No other keys are allowed in the design.`;

const SYSTEM_PROMPT = `You are the designer of an agent team. An orchestrator agent and the subagents it starts, all the same language model, solve a research task by following a written workflow; a judge then compares their workspace with another team's and names the better one. Your only lever is the workflow: the agents, their instructions, the contracts they return to the orchestrator, and the hops between them. You cannot change the task, its deliverables or the judge.

How to make a design better:
1. Use what a team can do and one agent alone cannot: specialists working in parallel on separate parts, one agent critiquing another's results, reconciling two independent estimates, a check by someone who did not do the work.
2. First, strengthen the output contracts. A contract names the exact files, numbers and checks a subagent must hand back, so the orchestrator can verify the work instead of trusting it. Put the task's specific requirements (file names, metrics, data pitfalls, validation rules) into contracts and checks.
3. Second, add round trips between the orchestrator and its subagents: conditional hops that send work back, narrower, when a check fails or a contract field is missing or doubtful.
4. Ground every change in evidence: a sentence of a judge's rationale, an item of the recurring-problems checklist, the execution record or the workspace. Fix recurring problems before anything else. Keep what the evidence says works.
5. A run that fails or runs out of time loses to any finished one: do not make the team so large or so slow that it cannot finish.

${REPLY_FORMAT}`;

export function buildOptimizerPrompt(
  input: OptimizerInput,
  options: OptimizerPromptOptions = {},
): OptimizerPrompt {
  const sections = [
    `# Task (${input.task.id})\n\n${input.task.prompt.trim()}`,
    `# Current design (${input.current.label})\n\n${designBlock(input.current.design)}${formNote(input.current.design)}`,
    `# How the current design's run went\n\n${input.execution ? renderExecutionMetadata(input.execution) : 'No execution record was given.'}`,
    `# Workspace evidence (${input.current.label})\n\n${input.workspaceEvidence?.trim() || 'None was given.'}`,
    previousBestSection(input),
    originalSection(input),
    historySection(input.history, options.historyLimit ?? DEFAULT_HISTORY_LIMIT),
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

function previousBestSection(input: OptimizerInput): string {
  const best = input.previousBest;
  if (!best) {
    return input.history.length === 0
      ? '# Best design so far\n\nNo design has been judged yet.'
      : '# Best design so far\n\nNot given; the comparison history below says who won each comparison.';
  }
  if (best.design === null) return bareReferenceSection(best.label, input.history);
  const rationale = best.rationale.trim() ? ` The judge's rationale:\n\n${quote(best.rationale)}` : '';
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
  lines.push(
    '',
    `To become the best, the next design must leave a better workspace than the ${label} run, not only a better design than the ones before it.`,
  );
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

function historySection(history: PairwiseComparison[], limit: number): string {
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
  shown.forEach((comparison, index) => parts.push(renderComparison(comparison, firstNumber + index)));
  return parts.join('\n\n');
}

function renderComparison(comparison: PairwiseComparison, number: number): string {
  const { candidate, opponent } = comparison;
  const winner =
    comparison.winner === 'tie'
      ? 'tie'
      : comparison.winner === 'candidate'
        ? `${candidate.label} (the candidate)`
        : `${opponent.label} (the opponent)`;
  const lines = [`## ${number}. ${candidate.label} against ${opponent.label}: winner ${winner}`];
  const orders = comparison.orders ?? [];
  if (orders.length > 0) {
    orders.forEach((order, index) => {
      lines.push(
        '',
        `Rationale, order ${index + 1} of ${orders.length} (${positionsIn(order.candidatePosition, candidate, opponent)}):\n\n${quote(order.rationale)}`,
      );
    });
  } else {
    const position = comparison.candidatePosition;
    const positions = position ? ` (${positionsIn(position, candidate, opponent)})` : '';
    lines.push('', `Rationale${positions}:\n\n${quote(comparison.rationale)}`);
  }
  const actionable = comparisonActionablePoints(comparison);
  const known =
    orders.length > 0
      ? 'both orders'
      : comparison.candidatePosition && `workspace ${comparison.candidatePosition}`;
  lines.push('', known ? `Actionable points for ${candidate.label} (${known}):` : 'Actionable points:');
  if (actionable.length === 0) lines.push('(none found)');
  else lines.push(...actionable.map((sentence) => `- ${sentence}`));
  lines.push(
    '',
    `Design differences (${opponent.label} → ${candidate.label}):`,
    '',
    designDifference(opponent, candidate),
  );
  if (comparison.candidateExecution) {
    lines.push('', `Run of ${candidate.label}:`, renderExecutionMetadata(comparison.candidateExecution));
  }
  return lines.join('\n');
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
