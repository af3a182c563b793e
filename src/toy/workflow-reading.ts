/**
 * The team workflow as the orchestrator reads it in its prompt (the text `renderWorkflow` writes): agents with their
 * role, instruction, contract fields and checks, and the call order. The toy reads the text rather than the data
 * because that is all a model gets.
 */

export interface ReadField {
  name: string;
  type: string;
  description: string;
  fields: ReadField[];
}

export interface ReadAgent {
  id: string;
  isOrchestrator: boolean;
  role: string;
  instruction: string;
  fields: ReadField[];
  checks: Array<{ name: string; description: string }>;
}

export interface ReadHop {
  from: string;
  to: string;
  condition?: string;
}

export interface ReadWorkflow {
  orchestratorId: string;
  agents: ReadAgent[];
  hops: ReadHop[];
}

export interface PromptParts {
  /** The task text, without the workflow and the teacher directive. */
  task: string;
  /** Absent when the prompt is the bare task. */
  workflow?: ReadWorkflow;
}

const WORKFLOW_HEADING = /^## Team workflow\s*$/m;
const DIRECTIVE_HEADING = /^## How to run this team\s*$/m;

/** Splits an episode prompt into the task and the workflow (if any); the teacher directive is dropped. */
export function readPrompt(prompt: string): PromptParts {
  const workflowAt = prompt.search(WORKFLOW_HEADING);
  const directiveAt = prompt.search(DIRECTIVE_HEADING);
  const taskEnd = Math.min(...[workflowAt, directiveAt, prompt.length].filter((index) => index >= 0));
  const task = prompt.slice(0, taskEnd).trimEnd();
  if (workflowAt < 0) return { task };
  const rest = prompt.slice(workflowAt);
  const next = rest.slice(1).search(/^## /m);
  const workflowText = next < 0 ? rest : rest.slice(0, next + 1);
  const workflow = readWorkflow(workflowText);
  return workflow ? { task, workflow } : { task };
}

function readWorkflow(text: string): ReadWorkflow | undefined {
  const blocks = text.split(/^### /m).slice(1);
  const agents: ReadAgent[] = [];
  let hops: ReadHop[] = [];
  for (const block of blocks) {
    const newline = block.indexOf('\n');
    const header = (newline < 0 ? block : block.slice(0, newline)).trim();
    const body = newline < 0 ? '' : block.slice(newline + 1);
    if (header === 'Call order') {
      hops = readHops(body);
      continue;
    }
    const id = header.replace(/\s*\(you\)\s*$/, '');
    agents.push({
      id,
      isOrchestrator: /\(you\)\s*$/.test(header),
      role: labelled(body, 'Role'),
      instruction: labelled(body, 'Instruction'),
      fields: readFields(listAfter(body, 'Returns to the orchestrator:')),
      checks: readChecks(listAfter(body, 'Checks it must run')),
    });
  }
  const orchestrator = agents.find((agent) => agent.isOrchestrator);
  if (!orchestrator || hops.length === 0) return undefined;
  return { orchestratorId: orchestrator.id, agents, hops };
}

/** The text after `Label: ` up to the next blank line followed by another part. */
function labelled(body: string, label: string): string {
  const match = new RegExp(
    `^${label}: ([\\s\\S]*?)(?=\\n\\n(?:Role:|Instruction:|Returns to|Checks it must)|\\n*$(?![\\s\\S]))`,
    'm',
  ).exec(body);
  return match?.[1]?.trim() ?? '';
}

/** The `- …` lines (and their indented children) after a line starting with `heading`. */
export function listAfter(body: string, heading: string): string[] {
  const lines = body.split('\n');
  const start = lines.findIndex((line) => line.startsWith(heading));
  if (start < 0) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') {
      if (items.length > 0) break;
      continue;
    }
    if (!/^\s*- /.test(line)) break;
    items.push(line);
  }
  return items;
}

/** `- name (type): description` lines; indented ones are the fields of the object field above them. */
export function readFields(lines: string[]): ReadField[] {
  const fields: ReadField[] = [];
  for (const line of lines) {
    const match = /^(\s*)- ([A-Za-z][A-Za-z0-9_]*) \(([a-z]+)\): (.*)$/.exec(line);
    if (!match) continue;
    const field = { name: match[2]!, type: match[3]!, description: match[4]!, fields: [] };
    const parent = fields.at(-1);
    if (match[1]!.length > 0 && parent) parent.fields.push(field);
    else fields.push(field);
  }
  return fields;
}

/** `- name: description` lines. */
export function readChecks(lines: string[]): Array<{ name: string; description: string }> {
  return lines.flatMap((line) => {
    const match = /^- ([A-Za-z][A-Za-z0-9_]*): (.*)$/.exec(line);
    return match ? [{ name: match[1]!, description: match[2]! }] : [];
  });
}

function readHops(body: string): ReadHop[] {
  const hops: ReadHop[] = [];
  for (const match of body.matchAll(/^\d+\. (\S+) → (\S+?)(?:, only if (.*))?$/gm)) {
    hops.push({ from: match[1]!, to: match[2]!, ...(match[3] ? { condition: match[3].trim() } : {}) });
  }
  return hops;
}
