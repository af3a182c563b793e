import { fileURLToPath } from 'node:url';

import {
  firstUserMessage,
  systemPromptOf,
  threadRoleOf,
  userPromptText,
} from '../../src/harness/qwen-code.js';
import { finalError } from '../../src/model/retry.js';
import { ChatMessage, type ChatModel, type ChatRequest } from '../../src/model/types.js';
import type { ScriptedRequest } from '../../src/testing/scripted-server.js';
import { step, type Step } from '../../src/toy/steps.js';

export const tasksDir = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));

/**
 * One model playing executor, judge and optimizer for a search over the tiny fixture tasks, by rules on what it is
 * sent, so that a search's course is known in advance:
 * - the team's orchestrator leaves `made-by-<tag>.txt` in the workspace (one shell call), then says it is done. The
 *   tag is `reference` for the bare task, `v0` for the task's own design, and the `[tag: …]` the optimizer wrote
 *   into later designs' orchestrator instruction;
 * - the optimizer copies the current design and appends `+` to its tag: each proposal is one step further;
 * - the judge finds each workspace's tag in its bundle and prefers the longer lineage (reference < v0 < v0+ < v0++).
 * Faults are injected by the hooks, given what the request is about.
 */
export interface SearchModelHooks {
  /** The episode of this task and tag fails (the model server answers 400). */
  failEpisode?: (task: string, tag: string) => boolean;
  /** The optimizer's reply is an invalid design (a hop to an agent that does not exist). */
  invalidProposal?: (call: { task: string; current: string; attempt: number; proposal: number }) => boolean;
  /** The judge's reply is not JSON. */
  malformedVerdict?: (call: { task: string; a: string; b: string; attempt: number }) => boolean;
}

const Body = ChatMessage.array();
const TAG = /\[tag: ([^\]]+)\]/;

export function searchModel(hooks: SearchModelHooks = {}) {
  const proposals = new Map<string, number>();
  const counts = { team: 0, judge: 0, optimizer: 0 };
  const responder = (request: ScriptedRequest): Step => {
    const messages = Body.parse((request.body as { messages: unknown }).messages);
    const system = systemPromptOf(messages) ?? '';
    const attempt = messages.filter((message) => message.role === 'assistant').length + 1;
    const user = textOf(messages[1]?.content ?? null);
    if (system.includes('You are the designer of an agent team')) {
      counts.optimizer++;
      const task = /^# Task \(([^)]+)\)/m.exec(user)![1]!;
      const current = /^# Current design \(([^)]+)\)/m.exec(user)![1]!;
      const design = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(user)![1]!) as DesignJson;
      if (attempt === 1) proposals.set(task, (proposals.get(task) ?? 0) + 1);
      const proposal = proposals.get(task)!;
      if (hooks.invalidProposal?.({ task, current, attempt, proposal })) {
        return step.text(
          JSON.stringify(reply({ ...design, hops: [...design.hops, { from: 'lead', to: 'nobody' }] })),
        );
      }
      const orchestrator = design.agents.find((agent) => agent.kind === 'orchestrator')!;
      const tag = TAG.exec(orchestrator.instruction)?.[1] ?? 'v0';
      orchestrator.instruction = `${orchestrator.instruction.replace(TAG, '').trim()} [tag: ${tag}+]`;
      return step.text(`Here is the design.\n${JSON.stringify(reply(design))}`);
    }
    if (system.includes('<workspace name="A">') || user.includes('<workspace name="A">')) {
      counts.judge++;
      const task = user.includes('# Average a column') ? 'tiny-mean' : 'tiny-sum';
      const a = tagOf(section(user, 'A'));
      const b = tagOf(section(user, 'B'));
      if (hooks.malformedVerdict?.({ task, a, b, attempt })) return step.text('A is better, clearly.');
      const winner = lineage(a) > lineage(b) ? 'A' : lineage(a) < lineage(b) ? 'B' : 'tie';
      return step.text(JSON.stringify({ winner, rationale: `(${a} vs ${b}) the longer lineage wins` }));
    }
    counts.team++;
    if (threadRoleOf(system) !== 'orchestrator') return step.text('Nothing to add.');
    const first = firstUserMessage(messages);
    const prompt = first?.content ? userPromptText(first.content) : '';
    const task = prompt.includes('# Average a column') ? 'tiny-mean' : 'tiny-sum';
    const tag = TAG.exec(prompt)?.[1] ?? (prompt.includes('Lead who plans') ? 'v0' : 'reference');
    if (hooks.failEpisode?.(task, tag)) return step.status(400, { message: 'context length exceeded' });
    if (attempt === 1) {
      return step.toolCall('run_shell_command', {
        command: `echo toy > made-by-${tag}.txt`,
        description: 'leave a mark',
      });
    }
    return step.text('Done.');
  };
  return { responder, counts };
}

interface DesignJson {
  agents: Array<{ id: string; kind: string; instruction: string }>;
  hops: Array<{ from: string; to: string }>;
}

function reply(design: DesignJson) {
  return {
    design,
    changes: ['lead: one step further'],
    why: 'the judge prefers longer lineages',
    evidence_used: ['the rationale'],
    expected_impact: 'the next workspace wins',
    verification_checks: ['the judge prefers it'],
  };
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' ? String(part.text) : '')).join('');
}

function section(user: string, name: 'A' | 'B'): string {
  return new RegExp(`<workspace name="${name}">([\\s\\S]*?)</workspace>`).exec(user)?.[1] ?? '';
}

function tagOf(bundle: string): string {
  return /made-by-([\w+.-]+)\.txt/.exec(bundle)?.[1] ?? 'none';
}

/** reference 0, v0 1, v0+ 2, v0++ 3 …; a workspace with no mark (a failed run) -1. */
export function lineage(tag: string): number {
  if (tag === 'none') return -1;
  if (tag === 'reference') return 0;
  return 1 + (tag.match(/\+/g)?.length ?? 0);
}

/**
 * The chat model, except that each call `fails` names (by a key) meets, once, a server that stayed down past the
 * call's retries: the error a real client throws after its last 503. The model is not asked.
 */
export function withTransportFailures(
  chat: ChatModel,
  fails: (request: ChatRequest) => string | null,
): ChatModel {
  const failed = new Set<string>();
  const failure = (request: ChatRequest): Error | null => {
    const key = fails(request);
    if (key === null || failed.has(key)) return null;
    failed.add(key);
    return finalError(
      { kind: 'status', status: 503, message: 'Service Unavailable', retryAfterMs: null },
      5,
      { endpoint: chat.endpoint, model: request.model },
    );
  };
  return {
    endpoint: chat.endpoint,
    complete: (request, options) => {
      const error = failure(request);
      return error ? Promise.reject(error) : chat.complete(request, options);
    },
    stream: (request, options) => {
      const error = failure(request);
      if (!error) return chat.stream(request, options);
      return (async function* () {
        yield* [];
        throw error;
      })();
    },
  };
}

/** Which role and task a search's judge or optimizer request is for, e.g. `judge tiny-mean`; null for others. */
export function roleCallKey(request: ChatRequest): string | null {
  const system = systemPromptOf(request.messages) ?? '';
  const user = textOf(request.messages[1]?.content ?? null);
  const task = user.includes('# Average a column') ? 'tiny-mean' : 'tiny-sum';
  if (system.includes('You are the designer of an agent team')) return `optimizer ${task}`;
  if (system.includes('<workspace name="A">') || user.includes('<workspace name="A">'))
    return `judge ${task}`;
  return null;
}
