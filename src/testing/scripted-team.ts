import { z } from 'zod';

import { firstUserMessage, systemPromptOf, threadRoleOf, userPromptText } from '../harness/qwen-code.js';
import { ChatMessage } from '../model/types.js';
import type { Responder, ScriptedRequest } from './scripted-server.js';
import { step, type Step } from '../toy/steps.js';

export interface TeamScript {
  /** The orchestrator's answers, one per turn. */
  orchestrator: Step[];
  /** Each subagent's answers, one per turn; a subagent is recognised by a text or pattern in its task prompt. */
  subagents?: Array<{ task: string | RegExp; steps: Step[] }>;
  /** The answer to the harness's own helper threads (memory extraction and the like). */
  auxiliary?: Step;
}

export interface ScriptedTeam {
  responder: Responder;
  /** What went wrong: threads with no script, or turns past the end of one. Empty when the team ran as scripted. */
  problems: string[];
}

const RequestBody = z.object({ messages: z.array(ChatMessage) });

/**
 * A responder that plays a whole agent team on the scripted server, whatever order the harness's calls come in:
 * each request is matched to its thread (orchestrator, a subagent by its task, or an auxiliary helper) and answered
 * with that thread's next scripted turn. Subagents may run concurrently with the orchestrator.
 */
export function scriptedTeam(script: TeamScript): ScriptedTeam {
  const problems: string[] = [];
  const fail = (problem: string): Step => {
    problems.push(problem);
    return step.status(500, { message: `scripted team: ${problem}` });
  };
  const responder = (request: ScriptedRequest): Step => {
    const parsed = RequestBody.safeParse(request.body);
    if (!parsed.success) return fail(`request #${request.index} is not a chat request`);
    const { messages } = parsed.data;
    const turn = messages.filter((message) => message.role === 'assistant').length;
    const role = threadRoleOf(systemPromptOf(messages));
    if (role === 'auxiliary') return script.auxiliary ?? step.text('Nothing worth remembering.');
    if (role === 'orchestrator') {
      return script.orchestrator[turn] ?? fail(`the orchestrator has no scripted turn ${turn}`);
    }
    const first = firstUserMessage(messages);
    const task = first?.content ? userPromptText(first.content) : '';
    const subagent = script.subagents?.find((candidate) =>
      typeof candidate.task === 'string' ? task.includes(candidate.task) : candidate.task.test(task),
    );
    if (!subagent) return fail(`no scripted subagent for the task ${JSON.stringify(task.slice(0, 80))}`);
    return (
      subagent.steps[turn] ?? fail(`the subagent for ${String(subagent.task)} has no scripted turn ${turn}`)
    );
  };
  return { responder, problems };
}
