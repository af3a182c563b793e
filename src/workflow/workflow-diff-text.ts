import { alignSequences } from '../sequence-alignment.js';
import type { WorkflowChange, WorkflowDiff } from './workflow-diff.js';
import { renderWordDiff, wordEdits } from './word-diff.js';
import type { ContractField, DesignForm, OutputContract, WorkflowHop } from './workflow.js';

/** The diff as text, one line per change, for people and for the optimizer's prompt. */
export function renderWorkflowDiff(diff: WorkflowDiff): string {
  if (diff.identical) return 'No change: the two designs are the same.';
  const lines = diff.changes.map(describeChange);
  const percent = Math.round(diff.size.fraction * 100);
  const unitName = diff.changes.some((change) => change.type === 'design-rewritten') ? 'words' : 'units';
  lines.push(
    `(${percent}% of the design changed: ${formatUnits(diff.size.changedUnits)} of ${diff.size.totalUnits} ${unitName})`,
  );
  return lines.join('\n');
}

function formatUnits(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function describeChange(change: WorkflowChange): string {
  switch (change.type) {
    case 'agent-added': {
      const contract = change.agent.contract ? ` | returns ${describeContract(change.agent.contract)}` : '';
      return `+ agent ${change.agent.id} (${change.agent.kind}): ${change.agent.role}${contract}`;
    }
    case 'agent-removed':
      return `- agent ${change.agent.id} (${change.agent.kind}): ${change.agent.role}`;
    case 'kind-changed':
      return `~ ${change.agentId}: kind ${change.before} → ${change.after}`;
    case 'role-changed':
      return `~ ${change.agentId}: role ${renderWordDiff(wordEdits(change.before, change.after))}`;
    case 'instruction-changed':
      return `~ ${change.agentId}: instruction ${renderWordDiff(wordEdits(change.before, change.after))}`;
    case 'contract-added':
      return `+ ${change.agentId}: contract, returns ${describeContract(change.contract)}`;
    case 'contract-removed':
      return `- ${change.agentId}: contract (returned ${describeContract(change.contract)})`;
    case 'field-added':
      return `+ ${change.agentId}: contract field ${describeField(change.field)}`;
    case 'field-removed':
      return `- ${change.agentId}: contract field ${describeField(change.field)}`;
    case 'field-changed':
      return `~ ${change.agentId}: contract field ${describeField(change.before)} → ${describeField(change.after)}`;
    case 'check-added':
      return `+ ${change.agentId}: check ${change.check.name}: ${change.check.description}`;
    case 'check-removed':
      return `- ${change.agentId}: check ${change.check.name}: ${change.check.description}`;
    case 'check-changed':
      return `~ ${change.agentId}: check ${change.before.name}: ${renderWordDiff(wordEdits(change.before.description, change.after.description))}`;
    case 'hop-added':
      return `+ hop ${describeHop(change.hop)} (step ${change.position})`;
    case 'hop-removed':
      return `- hop ${describeHop(change.hop)} (was step ${change.position})`;
    case 'hop-changed':
      return `~ hop ${change.before.from} → ${change.before.to}: condition ${describeCondition(change.before)} → ${describeCondition(change.after)}`;
    case 'hop-moved':
      return `~ hop ${describeHop(change.hop)}: moved from step ${change.from} to step ${change.to}`;
    case 'design-rewritten':
      return describeRewrite(change);
  }
}

/** How a design's form is named in a diff. */
export const DESIGN_FORM_NAMES: Record<DesignForm, string> = {
  'free-text': 'free text',
  draft: 'a partly specified structure',
  structured: 'the structured form',
};

/** The two texts line by line: removed lines marked "-", added ones "+", unchanged ones left out. */
function describeRewrite(change: Extract<WorkflowChange, { type: 'design-rewritten' }>): string {
  const head =
    change.fromForm === change.toForm
      ? `~ ${DESIGN_FORM_NAMES[change.fromForm]} rewritten, line by line ("-" removed, "+" added):`
      : `~ rewritten from ${DESIGN_FORM_NAMES[change.fromForm]} into ${DESIGN_FORM_NAMES[change.toForm]}, line by line ("-" removed, "+" added):`;
  const lines = [head];
  for (const step of alignSequences(change.before.split('\n'), change.after.split('\n'))) {
    if (step.op === 'same' || step.item.trim() === '') continue;
    lines.push(`  ${step.op === 'removed' ? '-' : '+'} ${step.item}`);
  }
  return lines.join('\n');
}

function describeContract(contract: OutputContract): string {
  const fields = contract.fields.map((field) => `${field.name} (${field.type})`).join(', ');
  const checks = contract.checks.map((check) => check.name).join(', ');
  return checks ? `${fields}; checks ${checks}` : fields;
}

function describeField(field: ContractField): string {
  const nested = field.fields
    ? ` {${field.fields.map((inner) => `${inner.name}: ${inner.type}`).join(', ')}}`
    : '';
  return `${field.name} (${field.type}${nested}): "${field.description}"`;
}

function describeHop(hop: WorkflowHop): string {
  return `${hop.from} → ${hop.to}${hop.condition ? ` if ${hop.condition}` : ''}`;
}

function describeCondition(hop: WorkflowHop): string {
  return hop.condition ? `"${hop.condition}"` : '(always)';
}
