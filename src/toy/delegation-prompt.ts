import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { listAfter, readChecks, readFields, type ReadField } from './workflow-reading.js';

/**
 * The worker prompt the toy orchestrator writes for one delegation, self-contained as the teacher directive asks
 * (role, instruction, workspace, files to write, contract, checks, the task), and the subagent's reading of it.
 */

export interface WorkerBrief {
  agentId: string;
  role: string;
  instruction: string;
  workspace: string;
  /** Workspace-relative files this worker writes; empty for a reviewer that only checks. */
  files: string[];
  fields: ReadField[];
  checks: Array<{ name: string; description: string }>;
  /** 1 for the first call of this agent; a re-work is attempt 2 or more. */
  attempt: number;
  /** Why the work comes back, for a re-work. */
  reworkReason?: string;
  /** The task text. */
  task: string;
}

export function writeWorkerPrompt(brief: WorkerBrief): string {
  const lines = [
    `You are the "${brief.agentId}" subagent of a research team. ${TOY_OUTPUT_MARKER}`,
    `Role: ${brief.role}`,
    `Instruction: ${brief.instruction}`,
    `Workspace (absolute path): ${brief.workspace}`,
    `Files you write: ${brief.files.length > 0 ? brief.files.join(', ') : 'none (check the files the others wrote)'}`,
    `Attempt: ${brief.attempt}`,
  ];
  if (brief.reworkReason) lines.push(`Re-work requested: ${brief.reworkReason}`);
  lines.push('', 'Return to the orchestrator:');
  for (const field of brief.fields) {
    lines.push(`- ${field.name} (${field.type}): ${field.description}`);
    for (const nested of field.fields)
      lines.push(`  - ${nested.name} (${nested.type}): ${nested.description}`);
  }
  if (brief.fields.length === 0) lines.push('- summary (string): What you did and found.');
  if (brief.checks.length > 0) {
    lines.push('', 'Checks to run, each reported as true or false:');
    for (const check of brief.checks) lines.push(`- ${check.name}: ${check.description}`);
  }
  lines.push(
    '',
    'Verify with the command you ran and end with the report above. The task follows.',
    '',
    '<task>',
    brief.task.trimEnd(),
    '</task>',
  );
  return lines.join('\n');
}

/** What a subagent reads from its prompt; fields a foreign prompt lacks come back empty. */
export interface WorkerReading {
  agentId: string;
  /** Undefined when the prompt names no files: the worker decides from the task. */
  files?: string[];
  fields: ReadField[];
  checks: Array<{ name: string; description: string }>;
  attempt: number;
  rework: boolean;
  /** The task text when the prompt carries one, else the whole prompt. */
  task: string;
  /** The prompt's own text before the task, where a role and instruction may mention files. */
  brief: string;
}

export function readWorkerPrompt(prompt: string): WorkerReading {
  const taskMatch = /<task>\n([\s\S]*?)\n<\/task>/.exec(prompt);
  const brief = taskMatch ? prompt.slice(0, taskMatch.index) : prompt;
  const filesLine = /^Files you write: (.*)$/m.exec(brief)?.[1];
  const files =
    filesLine === undefined
      ? undefined
      : filesLine.startsWith('none')
        ? []
        : filesLine
            .split(',')
            .map((file) => file.trim())
            .filter(Boolean);
  return {
    agentId: /^You are the "([^"]+)" subagent/m.exec(brief)?.[1] ?? 'worker',
    ...(files ? { files } : {}),
    fields: readFields(listAfter(brief, 'Return to the orchestrator:')),
    checks: readChecks(listAfter(brief, 'Checks to run')),
    attempt: Number(/^Attempt: (\d+)$/m.exec(brief)?.[1] ?? 1),
    rework: /^Re-work requested:/m.test(brief),
    task: taskMatch ? taskMatch[1]! : prompt,
    brief,
  };
}
