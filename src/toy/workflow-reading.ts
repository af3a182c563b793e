import { readFreeTextTeam, type FreeTextAgent, type FreeTextTeam } from './free-text-team.js';

/**
 * The team workflow as the orchestrator reads it in its prompt (the text `renderWorkflow` writes): agents with their
 * role, instruction, contract fields and checks, and the call order. The toy reads the text rather than the data
 * because that is all a model gets. A free-text team (a task's v0 given so) is whatever follows the task's last
 * generated section, "## Environment", and its first paragraph; when it holds a JSON list of agents
 * (`readFreeTextTeam`), the toy calls them in the order listed, each once. Text without such a list stays part of the
 * task, so that a bare prompt whose environment section grows a paragraph is still a bare prompt.
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
  /** The team as free text, when the prompt gives it so (then `workflow` is the toy's reading of it). */
  teamText?: string;
}

const WORKFLOW_HEADING = /^## Team workflow\s*$/m;
const DIRECTIVE_HEADING = /^## How to run this team\s*$/m;

/** Splits an episode prompt into the task and the workflow (if any); the teacher directive is dropped. */
export function readPrompt(prompt: string): PromptParts {
  const workflowAt = prompt.search(WORKFLOW_HEADING);
  const directiveAt = prompt.search(DIRECTIVE_HEADING);
  const taskEnd = Math.min(...[workflowAt, directiveAt, prompt.length].filter((index) => index >= 0));
  const task = prompt.slice(0, taskEnd).trimEnd();
  if (workflowAt < 0) {
    const freeText = splitFreeTextTeam(task);
    const team = freeText && readFreeTextTeam(freeText.teamText);
    // Text that lists no agents is read as part of the task: the toy then works as on the bare task.
    if (!freeText || !team?.listed) return { task };
    return { task: freeText.task, workflow: freeTextWorkflow(team), teamText: freeText.teamText };
  }
  const rest = prompt.slice(workflowAt);
  const next = rest.slice(1).search(/^## /m);
  const workflowText = next < 0 ? rest : rest.slice(0, next + 1);
  const workflow = readWorkflow(workflowText);
  return workflow ? { task, workflow } : { task };
}

const ENVIRONMENT_HEADING = /^## Environment\s*$/m;

/** The task and the free text after it: what follows the first paragraph of the task's "## Environment" section. */
function splitFreeTextTeam(text: string): { task: string; teamText: string } | undefined {
  const heading = ENVIRONMENT_HEADING.exec(text);
  if (!heading) return undefined;
  const afterHeading = heading.index + heading[0].length;
  const paragraphStart = afterHeading + (/^\s*/.exec(text.slice(afterHeading))?.[0].length ?? 0);
  const paragraphEnd = text.indexOf('\n\n', paragraphStart);
  if (paragraphEnd < 0) return undefined;
  const teamText = text.slice(paragraphEnd).trim();
  if (teamText === '') return undefined;
  return { task: text.slice(0, paragraphEnd).trimEnd(), teamText };
}

/** The free-text team as a workflow the toy can run: the orchestrator calls each subagent in turn. */
function freeTextWorkflow(team: FreeTextTeam): ReadWorkflow {
  const agent = (member: FreeTextAgent): ReadAgent => ({
    id: member.id,
    isOrchestrator: member.isOrchestrator,
    role: member.role,
    instruction: member.instruction,
    fields: [],
    checks: [],
  });
  const lead = team.orchestrator.id;
  return {
    orchestratorId: lead,
    agents: [agent(team.orchestrator), ...team.subagents.map(agent)],
    hops: team.subagents.flatMap((member) => [
      { from: lead, to: member.id },
      { from: member.id, to: lead },
    ]),
  };
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
  if (!orchestrator) return undefined;
  if (hops.length === 0) {
    // A draft v0 leaves the order open: the toy calls the subagents in the order they are listed.
    hops = agents
      .filter((agent) => !agent.isOrchestrator)
      .flatMap((agent) => [
        { from: orchestrator.id, to: agent.id },
        { from: agent.id, to: orchestrator.id },
      ]);
    if (hops.length === 0) return undefined;
  }
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
