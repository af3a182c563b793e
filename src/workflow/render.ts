import { canonicalJson } from '../canonical-json.js';
import { createHash } from 'node:crypto';

import { DELEGATION_TOOL } from './delegation-tool.js';
import { isFreeTextDesign, type ContractField, type TeamDesign, type WorkflowAgent } from './workflow.js';

/**
 * The workflow as the orchestrator reads it in its prompt: the team, each agent's contract, and the call order. A
 * free-text design is its text exactly as given, nothing added: the official runner puts it after the task the same
 * way, and the orchestrator forms the team it describes with the harness's delegation tool.
 */
export function renderWorkflow(workflow: TeamDesign): string {
  if (isFreeTextDesign(workflow)) return workflow.text;
  const orchestrator = workflow.agents.find((agent) => agent.kind === 'orchestrator');
  const lines = [
    '## Team workflow',
    '',
    `Run this task as an agent team with the agents below. You are the orchestrator${orchestrator ? ` ("${orchestrator.id}")` : ''}; start every other agent as a subagent with the \`${DELEGATION_TOOL}\` tool, giving it its role, instruction and contract.`,
    '',
    // Background delegation (the harness's default) returns results as later `<task-notification>` user turns; asked
    // for here, and not only in the teacher directive, search and training episodes delegate the same way.
    `Call each subagent in the foreground (\`run_in_background: false\`) and wait for its result before you go on.`,
  ];
  for (const agent of workflow.agents) lines.push('', ...renderAgent(agent));
  if (workflow.hops.length === 0) {
    // A draft v0 may leave the order open; the heading stays so that the section reads the same in every version.
    lines.push('', '### Call order', '', 'Not fixed: call the subagents in the order the work needs.');
    return lines.join('\n');
  }
  lines.push('', '### Call order', '');
  workflow.hops.forEach((hop, index) => {
    lines.push(`${index + 1}. ${hop.from} → ${hop.to}${hop.condition ? `, only if ${hop.condition}` : ''}`);
  });
  return lines.join('\n');
}

function renderAgent(agent: WorkflowAgent): string[] {
  const lines = [
    `### ${agent.id}${agent.kind === 'orchestrator' ? ' (you)' : ''}`,
    '',
    `Role: ${agent.role}`,
    '',
    `Instruction: ${agent.instruction}`,
  ];
  if (agent.contract) {
    lines.push('', 'Returns to the orchestrator:');
    for (const field of agent.contract.fields) lines.push(...renderField(field, ''));
    if (agent.contract.checks.length > 0) {
      lines.push('', 'Checks it must run, each reported as true or false:');
      for (const check of agent.contract.checks) lines.push(`- ${check.name}: ${check.description}`);
    }
  }
  return lines;
}

function renderField(field: ContractField, indent: string): string[] {
  const lines = [`${indent}- ${field.name} (${field.type}): ${field.description}`];
  for (const nested of field.fields ?? [])
    lines.push(`${indent}  - ${nested.name} (${nested.type}): ${nested.description}`);
  return lines;
}

/** A short, stable identity of a workflow's content, whatever the key order it was written in. */
export function workflowHash(workflow: TeamDesign): string {
  return createHash('sha256').update(canonicalJson(workflow)).digest('hex').slice(0, 16);
}
