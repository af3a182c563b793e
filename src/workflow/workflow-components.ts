import type { OutputContract, Workflow, WorkflowHop } from './workflow.js';

/**
 * The four components of a design whose text the workflow analysis embeds (the paper's Figure 5): an agent's role,
 * its instruction, its contract, and the hops it takes part in. Each is text of one agent, so that an agent's
 * components can be compared with each other as well as with the task.
 */
export const WORKFLOW_COMPONENTS = ['role', 'instruction', 'contract', 'hops'] as const;
export type WorkflowComponent = (typeof WORKFLOW_COMPONENTS)[number];

/** One component of one agent of a design, as the text that is embedded. */
export interface ComponentText {
  agent: string;
  component: WorkflowComponent;
  text: string;
}

/**
 * Every component text of a structured design (a complete workflow or a draft), agent by agent in the design's
 * order. An agent without a contract (an orchestrator, or a draft's subagent) has no contract text, and one that
 * appears in no hop has no hops text.
 */
export function designComponents(design: Workflow): ComponentText[] {
  const texts: ComponentText[] = [];
  for (const agent of design.agents) {
    texts.push({ agent: agent.id, component: 'role', text: agent.role });
    texts.push({ agent: agent.id, component: 'instruction', text: agent.instruction });
    if (agent.contract)
      texts.push({ agent: agent.id, component: 'contract', text: contractText(agent.contract) });
    const hops = agentHopsText(agent.id, design.hops);
    if (hops !== null) texts.push({ agent: agent.id, component: 'hops', text: hops });
  }
  return texts;
}

/** A contract as text: each field (name, type, description, and its nested fields), then each check. */
export function contractText(contract: OutputContract): string {
  const lines: string[] = [];
  for (const field of contract.fields) {
    lines.push(`${field.name} (${field.type}): ${field.description}`);
    for (const nested of field.fields ?? [])
      lines.push(`  ${field.name}.${nested.name} (${nested.type}): ${nested.description}`);
  }
  for (const check of contract.checks) lines.push(`check ${check.name}: ${check.description}`);
  return lines.join('\n');
}

/** The hops an agent takes part in, one line each in the design's order (`a -> b`, `when <condition>` after a conditional one); null when none. */
export function agentHopsText(agentId: string, hops: readonly WorkflowHop[]): string | null {
  const lines = hops
    .filter((hop) => hop.from === agentId || hop.to === agentId)
    .map((hop) => `${hop.from} -> ${hop.to}${hop.condition ? ` when ${hop.condition}` : ''}`);
  return lines.length === 0 ? null : lines.join('\n');
}
