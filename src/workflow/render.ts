import { canonicalJson } from '../canonical-json.js';
import { createHash } from 'node:crypto';

import { DELEGATION_TOOL } from '../harness/qwen-code.js';
import type { ContractField, Workflow, WorkflowAgent } from './workflow.js';

/** The workflow as the orchestrator reads it in its prompt: the team, each agent's contract, and the call order. */
export function renderWorkflow(workflow: Workflow): string {
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
export function workflowHash(workflow: Workflow): string {
  return createHash('sha256').update(canonicalJson(workflow)).digest('hex').slice(0, 16);
}
