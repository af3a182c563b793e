import { isDeepStrictEqual } from 'node:util';

import { DESIGN_FORM_NAMES, diffWorkflows, renderWorkflowDiff } from '../workflow/workflow-diff.js';
import { designForm, draftGaps, isFreeTextDesign, type TeamDesign } from '../workflow/workflow.js';
import type { ComparedDesign } from '../records/optimizer-history.js';
import type { OptimizerInput } from './optimizer-prompt.js';

// How the optimizer's prompt shows designs: as the reply should write them, what a draft or free-text design lacks,
// and the change from one design to another.

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
export function formNote(design: TeamDesign): string {
  switch (designForm(design)) {
    case 'structured':
      return '';
    case 'free-text':
      return "\n\nThis design is free text, as the task's author wrote it: it has no structured form yet. Your reply must nevertheless give the design in the structured JSON form of your instructions (agents with a kind, role, instruction and, for every subagent, a contract; hops), keeping what the text asks for that the evidence does not argue against.";
    case 'draft':
      return `\n\nThis design is not complete yet: ${draftGaps(design).join('; ')}. Your reply must give the complete design: a contract for every subagent and the hops, every subagent in at least one.`;
  }
}

export function answerRequest(label: string, design: TeamDesign): string {
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

export function originalSection(input: OptimizerInput): string {
  if (isDeepStrictEqual(input.original, input.current.design)) {
    return `# Original design (v0)\n\nThe current design is the original one.`;
  }
  const drift = designChange(input.original, input.current.design);
  return `# Original design (v0)\n\n${designBlock(input.original)}\n\nChanges from v0 to the current design:\n\n${drift}`;
}

export function designDifference(from: ComparedDesign, to: ComparedDesign): string {
  if (from.design && to.design) return designChange(from.design, to.design);
  if (!from.design && !to.design) return 'Both ran the bare task without a workflow.';
  const bare = from.design ? to.label : from.label;
  return `${bare} ran the bare task without a workflow, so there is no design to compare.`;
}

/**
 * The diff of two designs for the prompt. A rewrite between free text and a structure is said in one line: both
 * texts line by line would repeat designs the prompt shows anyway.
 */
export function designChange(from: TeamDesign, to: TeamDesign): string {
  const diff = diffWorkflows(from, to);
  const rewrite = diff.changes.find((change) => change.type === 'design-rewritten');
  if (!rewrite) return renderWorkflowDiff(diff);
  const what =
    rewrite.fromForm === rewrite.toForm
      ? `The ${DESIGN_FORM_NAMES[rewrite.fromForm]} was rewritten`
      : `The design was rewritten from ${DESIGN_FORM_NAMES[rewrite.fromForm]} into ${DESIGN_FORM_NAMES[rewrite.toForm]}`;
  return `${what}: ${Math.round(diff.size.fraction * 100)}% of the words differ, as the orchestrator reads the two (${diff.size.changedUnits} of ${diff.size.totalUnits} words).`;
}

export function changeBoundSection(maxChangeFraction: number): string {
  const percent = Math.round(maxChangeFraction * 100);
  return `# How much may change\n\n${CHANGE_MEASURE} In this iteration change at most ${percent}% of the current design. Spend it on the changes the evidence supports most.`;
}

/** How change is measured, in words the optimizer can act on. */
export const CHANGE_MEASURE =
  "Change is measured over the units of the design: each agent's role, each instruction, each contract field, each check and each hop. An added or removed unit counts fully, a reworded text counts the share of its words that changed, a hop moved in the call order counts fully.";
