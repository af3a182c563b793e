import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import type { ChatMessage } from '../model/types.js';
import { step, type Step } from './steps.js';
import { toolCallsOf, viewConversation } from './conversation.js';
import { readWorkerPrompt, writeWorkerPrompt } from './delegation-prompt.js';
import { workerReport } from './subagent.js';
import { readTask, workingDirectoryOf } from './task-reading.js';
import { implicitTeam, nextCall, teamFromWorkflow, type CompletedCall, type TeamPlan } from './team-plan.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { textKey, toyDraw } from './toy-random.js';
import type { ToyWeights } from './weights.js';
import { readWorkerResult, workerToolTurn } from './worker.js';
import { readPrompt } from './workflow-reading.js';

/**
 * The toy orchestrator. Given a workflow it delegates with probability `delegateWithWorkflow`, calling the
 * subagents in hop order through the harness's delegation tool, foreground, one at a time; given the bare task it
 * forms a team of its own with probability `delegateBare`. Otherwise it does the work alone (write, run, report).
 */
export function orchestratorTurn(messages: ChatMessage[], seed: number, weights: ToyWeights): Step {
  const view = viewConversation(messages);
  const parts = readPrompt(view.prompt);
  const task = readTask(parts.task);
  const workspace = workingDirectoryOf(view.firstMessageText) ?? '.';
  const taskKey = textKey(parts.task);
  const delegates = parts.workflow
    ? toyDraw(seed, taskKey, 'delegate-with-workflow') < weights.delegateWithWorkflow
    : toyDraw(seed, taskKey, 'delegate-bare') < weights.delegateBare;

  if (!delegates) {
    const agentId = parts.workflow?.orchestratorId ?? 'lead';
    const job = {
      agentId,
      task,
      workspace,
      outputs: task.deliverables,
      checks: [],
      attempt: 1,
      weights,
      drawKey: [seed, taskKey, agentId, 1],
    };
    if (view.turn === 0 || view.turn === 1) return workerToolTurn(job, view.turn);
    const result = view.lastToolOutput === undefined ? undefined : readWorkerResult(view.lastToolOutput);
    return step.text(
      `I did the work myself. ${workerReport({ agentId, fields: [], checks: [] }, result, view.lastToolOutput)}`,
      { reasoning: `Done alone; summarise. ${TOY_OUTPUT_MARKER}` },
    );
  }

  const plan = parts.workflow
    ? teamFromWorkflow(parts.workflow, task.deliverables)
    : implicitTeam(task.deliverables);
  const done = completedCalls(messages);
  const next = nextCall(plan, done);
  if (!next) {
    return step.text(finalSummary(plan, done), {
      reasoning: `Every stage has reported back; finish with a summary of each call. ${TOY_OUTPUT_MARKER}`,
    });
  }
  const member = plan.members.find((candidate) => candidate.id === next.agentId)!;
  const prompt = writeWorkerPrompt({
    agentId: member.id,
    role: member.role,
    instruction: member.instruction,
    workspace,
    files: member.files,
    fields: member.fields,
    checks: member.checks,
    attempt: next.attempt,
    ...(next.reworkReason ? { reworkReason: next.reworkReason } : {}),
    task: parts.task,
  });
  return step.toolCall(
    DELEGATION_TOOL,
    {
      description: `${member.id}: ${next.attempt > 1 ? 're-work' : shortRole(member.role)}`,
      prompt,
      subagent_type: 'general-purpose',
      run_in_background: false,
    },
    {
      reasoning: next.reworkReason
        ? `The condition of a return hop holds (${next.reworkReason}); send the work back to ${member.id}. ${TOY_OUTPUT_MARKER}`
        : `Next in the call order: ${member.id}. ${TOY_OUTPUT_MARKER}`,
    },
  );
}

/** The delegations made so far, with the reports they returned, read back from the conversation. */
function completedCalls(messages: ChatMessage[]): CompletedCall[] {
  return toolCallsOf(messages, DELEGATION_TOOL).flatMap((call) => {
    if (call.result === undefined) return [];
    const prompt = typeof call.arguments.prompt === 'string' ? call.arguments.prompt : '';
    return [{ agentId: readWorkerPrompt(prompt).agentId, report: call.result }];
  });
}

function finalSummary(plan: TeamPlan, done: CompletedCall[]): string {
  const lines = [`All stages are done ${TOY_OUTPUT_MARKER}. Worker calls:`];
  done.forEach((call, index) => {
    const member = plan.members.find((candidate) => candidate.id === call.agentId);
    const files = /^Files written: (.*)$/m.exec(call.report)?.[1] ?? 'none';
    const checkLines = /^Checks:\n((?:- .*\n?)*)/m.exec(call.report)?.[1] ?? '';
    const checks = [...checkLines.matchAll(/^- (\w+): (true|false|not run)$/gm)].map(
      (match) => `${match[1]} ${match[2]}`,
    );
    const outcome = /^- completed: false/m.test(call.report) ? 'failed' : 'reported back';
    lines.push(
      `${index + 1}. ${call.agentId}${member ? ` (${shortRole(member.role)})` : ''}: ${outcome}; files ${files}; checks ${checks.join(', ') || 'none'}`,
    );
  });
  return lines.join('\n');
}

function shortRole(role: string): string {
  const words = role.replace(/[.]$/, '').split(/\s+/);
  return words.length > 6 ? `${words.slice(0, 6).join(' ')}…` : words.join(' ');
}
