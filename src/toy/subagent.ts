import type { ChatMessage } from '../model/types.js';
import { step, type Step } from './steps.js';
import { viewConversation } from './conversation.js';
import { readWorkerPrompt, type WorkerReading } from './delegation-prompt.js';
import {
  mentions,
  readTask,
  workingDirectoryOf,
  type DeliverableSpec,
  type TaskReading,
} from './task-reading.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { textKey } from './toy-random.js';
import type { ToyWeights } from './weights.js';
import { readWorkerResult, workerToolTurn, type WorkerJob, type WorkerResult } from './worker.js';
import type { ReadField } from './workflow-reading.js';

/**
 * A toy subagent: reads its worker prompt (role, files to write, contract, checks, the task), writes and runs one
 * analysis script, and answers with a report that fills every field of its contract and states each check as true,
 * false or "not run".
 */
export function subagentTurn(messages: ChatMessage[], seed: number, weights: ToyWeights): Step {
  const view = viewConversation(messages);
  const reading = readWorkerPrompt(view.prompt);
  const task = readTask(reading.task);
  const job: WorkerJob = {
    agentId: reading.agentId,
    task,
    workspace:
      workingDirectoryOf(view.firstMessageText) ??
      /^Workspace \(absolute path\): (.+)$/m.exec(reading.brief)?.[1] ??
      '.',
    outputs: outputsOf(reading, task),
    checks: reading.checks.map((check) => check.name),
    attempt: reading.attempt,
    weights,
    drawKey: [seed, textKey(task.text), reading.agentId, reading.attempt],
  };
  if (view.turn === 0 || view.turn === 1) return workerToolTurn(job, view.turn);
  const result = view.lastToolOutput === undefined ? undefined : readWorkerResult(view.lastToolOutput);
  return step.text(workerReport(reading, result, view.lastToolOutput), {
    reasoning: `The script has run; fill the contract from its result line. ${TOY_OUTPUT_MARKER}`,
  });
}

/** The files a worker writes: those its prompt names, else the deliverables its brief mentions, else all of them. */
function outputsOf(reading: WorkerReading, task: TaskReading): DeliverableSpec[] {
  if (reading.files) {
    return reading.files.map(
      (file) =>
        task.deliverables.find((deliverable) => deliverable.path === file) ?? {
          path: file,
          kind: 'other',
          requiredKeys: [],
          sections: [],
          minWords: 0,
          columns: [],
        },
    );
  }
  const mentioned = task.deliverables.filter((deliverable) => mentions(reading.brief, deliverable.path));
  return mentioned.length > 0 ? mentioned : task.deliverables;
}

/** The report: one line per contract field, one per check, the files written and the problems found. */
export function workerReport(
  reading: Pick<WorkerReading, 'agentId' | 'fields' | 'checks'>,
  result: WorkerResult | undefined,
  toolOutput: string | undefined,
): string {
  const lines = [`Report from ${reading.agentId} ${TOY_OUTPUT_MARKER}`];
  if (!result) {
    const tail = (toolOutput ?? 'no output').trim().split('\n').slice(-6).join('\n');
    lines.push('- completed: false', `The script did not finish. Its output ended with:\n${tail}`);
    return lines.join('\n');
  }
  const fields = reading.fields.length > 0 ? reading.fields : [SUMMARY_FIELD];
  for (const field of fields) lines.push(...fieldLines(field, result, ''));
  lines.push('Checks:');
  const checkNames = unique([...reading.checks.map((check) => check.name), ...Object.keys(result.checks)]);
  for (const name of checkNames) {
    lines.push(`- ${name}: ${name in result.checks ? String(result.checks[name]) : 'not run'}`);
  }
  if (checkNames.length === 0) lines.push('- none asked');
  lines.push(`Files written: ${result.files.join(', ') || 'none'}`);
  lines.push(`Problems: ${result.problems.length > 0 ? result.problems.join('; ') : 'none'}`);
  return lines.join('\n');
}

const SUMMARY_FIELD: ReadField = {
  name: 'summary',
  type: 'string',
  description: 'What was done and found.',
  fields: [],
};

function fieldLines(field: ReadField, result: WorkerResult, indent: string): string[] {
  if (field.type === 'object') {
    return [
      `${indent}- ${field.name}:`,
      ...field.fields.flatMap((nested) => fieldLines(nested, result, `${indent}  `)),
    ];
  }
  return [`${indent}- ${field.name}: ${formatValue(fieldValue(field, result))}`];
}

function fieldValue(field: ReadField, result: WorkerResult): unknown {
  const name = field.name.toLowerCase();
  if (field.name in result.values) return result.values[field.name];
  const failed = Object.values(result.checks).filter((passed) => !passed).length;
  switch (field.type) {
    case 'boolean':
      return failed === 0;
    case 'path':
      return (
        result.files.find((file) => tokens(file).some((token) => name.includes(token))) ??
        result.files[0] ??
        'none'
      );
    case 'list':
      if (/issue|problem|fail/.test(name)) return result.problems;
      if (/check/.test(name)) return Object.keys(result.checks);
      return result.files;
    case 'integer':
    case 'number': {
      if (/check/.test(name)) return Object.values(result.checks).filter(Boolean).length;
      if (/issue|problem|fail/.test(name)) return result.problems.length;
      const match = Object.entries(result.values).find(([key]) =>
        tokens(key).some((token) => name.includes(token)),
      );
      return match ? match[1] : 'not computed';
    }
    default: {
      const numbers = Object.entries(result.values)
        .map(([key, value]) => `${key} = ${formatNumber(value)}`)
        .join(', ');
      return `${result.data ? `analysed ${result.data}; ` : ''}${numbers || 'no number computed'}`;
    }
  }
}

function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length >= 3 && !['json', 'csv', 'md', 'results', 'file'].includes(token));
}

function formatValue(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (Array.isArray(value)) return value.length > 0 ? value.map(String).join('; ') : 'none';
  return String(value);
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : Number(value.toPrecision(5)).toString();
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
