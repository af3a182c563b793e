import { z } from 'zod';

import {
  contentText,
  firstUserMessage,
  systemPromptOf,
  threadRoleOf,
  userPromptText,
  type ThreadRole,
} from '../harness/qwen-code.js';
import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import { HARNESS_ASSISTANT_TEXTS, compactionResumeText } from '../harness/qwen-code-history.js';
import { ChatMessage, type AssistantMessage, type MessageContent } from '../model/types.js';
import type { ProxyLogRow } from '../proxy/log-row.js';
import { assistantMessageKey, toolCallsKey } from './message-equivalence.js';

/** Who built a chat request the proxy recorded: the harness, or someone else (agent code posting to the proxy). */
export interface RequestProvenance {
  seq: number;
  role: ThreadRole;
  /** Why the request is not one the harness built; null when it is. */
  forgery: string | null;
  /** For a subagent's request: the `agent` call whose prompt opened its conversation. */
  delegatedBy: string | null;
}

export interface ProvenanceOptions {
  /**
   * The episode's prompt (`prompt.md`): the orchestrator's conversation opens with it. Unknown for an old episode
   * rebuilt without it: then the first orchestrator request stands for it.
   */
  episodePrompt?: string;
}

const ChatRequest = z.looseObject({ messages: z.array(ChatMessage).min(1) });

/** Whether a proxy log row is a chat completion request (whatever its method or body). */
export function isChatRow(row: Pick<ProxyLogRow, 'path'>): boolean {
  return row.path.split('?')[0]!.endsWith('/chat/completions');
}

/**
 * Tells the chat requests the harness built from those agent code posted to the proxy itself (through the forwarder
 * inside the sandbox, which any process there can reach). A request is the harness's only when everything in its
 * context that could not have come from the agents' tools was produced by the harness and the model:
 *
 * - every assistant turn is a response the model gave earlier in the episode to one of the harness's requests (as
 *   the harness echoes it: see `sameMessage`; a trailing tool call it dropped may be missing), or a turn the harness
 *   writes itself (`HARNESS_ASSISTANT_TEXTS`, with tool calls of such a response);
 * - the conversation opens as the harness opens one: the orchestrator's with the episode's prompt, a subagent's with
 *   the `prompt` of an `agent` call in such a response, a helper's (auxiliary) with the opening of one of the
 *   harness's conversations, and any of them after a compaction with the summary such a response wrote.
 *
 * Tool results and the harness's reminders are not checked: agents' tools produce them anyway. A request posted by
 * agent code that copies a context of the harness byte for byte passes, and is then no forgery of that context.
 * Each request is judged against the earlier ones (by sequence number) of the harness: `requestProvenance` feeds the
 * whole log in that order.
 */
class RequestProvenanceJudge {
  /** Assistant messages the model gave (every prefix of their tool calls too), with the first request's number. */
  private readonly responses = new Map<string, number>();
  /** Tool-call lists of those responses (every prefix), which a harness-written acknowledgement may carry. */
  private readonly toolCallLists = new Map<string, number>();
  /** The opening of a compacted history each summariser's response would give. */
  private readonly summaries = new Map<string, number>();
  /** `agent` calls in those responses, by their prompt. */
  private readonly delegations = new Map<string, Array<{ id: string; seq: number }>>();
  /** First user messages of the harness's requests. */
  private readonly openings = new Map<string, number>();
  private orchestratorOpening: string | undefined;

  constructor(private readonly options: ProvenanceOptions = {}) {}

  /** The provenance of a chat request; null for any other row. */
  observe(row: ProxyLogRow): RequestProvenance | null {
    if (!isChatRow(row)) return null;
    const request = ChatRequest.safeParse(row.request);
    if (!request.success) {
      return {
        seq: row.seq,
        role: 'auxiliary',
        forgery: 'its body is not a chat request with messages, as the harness sends',
        delegatedBy: null,
      };
    }
    const { messages } = request.data;
    const role = threadRoleOf(systemPromptOf(messages));
    const forgery = this.forgedTurn(messages, row.seq) ?? this.forgedOpening(messages, role, row.seq);
    const delegatedBy =
      forgery === null && role === 'subagent' ? (this.delegationOf(messages, row.seq)?.id ?? null) : null;
    if (forgery === null) this.learn(row, messages, role);
    return { seq: row.seq, role, forgery, delegatedBy };
  }

  private forgedTurn(messages: ChatMessage[], seq: number): string | null {
    for (const [index, message] of messages.entries()) {
      if (message.role !== 'assistant') continue;
      if (isBefore(this.responses.get(assistantMessageKey(message)), seq)) continue;
      const calls = message.tool_calls ?? [];
      const harnessWritten =
        HARNESS_ASSISTANT_TEXTS.has(contentText(message.content).trim()) &&
        (calls.length === 0 || isBefore(this.toolCallLists.get(toolCallsKey(calls)), seq));
      if (harnessWritten) continue;
      return `its message ${index} (an assistant turn) is no response the model gave earlier in the episode`;
    }
    return null;
  }

  private forgedOpening(messages: ChatMessage[], role: ThreadRole, seq: number): string | null {
    const first = firstUserMessage(messages);
    if (!first) return 'it has no user message';
    // What the harness wrote in it, without the reminders it puts before (and sometimes adds to a copy).
    const opening = userPromptText(first.content ?? '');
    const compacted = [opening, firstText(first.content ?? '')].some((text) =>
      isBefore(this.summaries.get(text), seq),
    );
    if (compacted) return null;
    if (role === 'orchestrator') {
      const { episodePrompt } = this.options;
      if (episodePrompt !== undefined) {
        return opening.includes(episodePrompt.trim())
          ? null
          : "the orchestrator's conversation does not open with the episode's prompt";
      }
      this.orchestratorOpening ??= opening;
      return opening === this.orchestratorOpening
        ? null
        : "the orchestrator's conversation does not open as its first request did";
    }
    if (role === 'subagent') {
      return this.delegationOf(messages, seq)
        ? null
        : "the subagent's conversation does not open with the prompt of an earlier `agent` call";
    }
    return isBefore(this.openings.get(opening), seq)
      ? null
      : "the helper's conversation does not open as one of the harness's conversations";
  }

  /** The latest earlier `agent` call whose prompt opens this subagent's conversation. */
  private delegationOf(messages: ChatMessage[], seq: number): { id: string; seq: number } | undefined {
    const first = firstUserMessage(messages);
    if (!first) return undefined;
    const calls = this.delegations.get(userPromptText(first.content ?? '').trim()) ?? [];
    return calls.filter((call) => call.seq < seq).at(-1);
  }

  private learn(row: ProxyLogRow, messages: ChatMessage[], role: ThreadRole): void {
    const first = firstUserMessage(messages);
    if (first) keepEarliest(this.openings, userPromptText(first.content ?? ''), row.seq);
    // A response cut mid-stream reached the harness too, in part: the harness may echo what it got.
    if (row.response?.kind !== 'completion') return;
    const response: AssistantMessage = row.response.completion.message;
    const calls = response.tool_calls ?? [];
    for (let length = 0; length <= calls.length; length++) {
      const prefix = calls.slice(0, length);
      keepEarliest(
        this.responses,
        assistantMessageKey({ content: response.content, tool_calls: prefix }),
        row.seq,
      );
      if (length > 0) keepEarliest(this.toolCallLists, toolCallsKey(prefix), row.seq);
    }
    if (role === 'auxiliary') {
      keepEarliest(this.summaries, compactionResumeText(contentText(response.content)), row.seq);
    }
    for (const call of calls) {
      if (call.function.name !== DELEGATION_TOOL) continue;
      const prompt = delegationPrompt(call.function.arguments);
      if (prompt === null) continue;
      const known = this.delegations.get(prompt) ?? [];
      known.push({ id: call.id, seq: row.seq });
      known.sort((a, b) => a.seq - b.seq);
      this.delegations.set(prompt, known);
    }
  }
}

/** Every chat request of a proxy log with its provenance, judged in the order the proxy numbered them. */
export function requestProvenance(
  rows: readonly ProxyLogRow[],
  options: ProvenanceOptions = {},
): Map<number, RequestProvenance> {
  const judge = new RequestProvenanceJudge(options);
  const provenance = new Map<number, RequestProvenance>();
  for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
    const verdict = judge.observe(row);
    if (verdict) provenance.set(row.seq, verdict);
  }
  return provenance;
}

function isBefore(firstSeq: number | undefined, seq: number): boolean {
  return firstSeq !== undefined && firstSeq < seq;
}

function keepEarliest(map: Map<string, number>, key: string, seq: number): void {
  const known = map.get(key);
  if (known === undefined || seq < known) map.set(key, seq);
}

/** The text of a message's first part: a compacted history's summary leads its first user message. */
function firstText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  const part = content[0];
  return part && typeof part.text === 'string' ? part.text : '';
}

function delegationPrompt(argumentsText: string): string | null {
  try {
    const input: unknown = JSON.parse(argumentsText);
    if (typeof input !== 'object' || input === null) return null;
    const prompt = (input as Record<string, unknown>).prompt;
    return typeof prompt === 'string' ? prompt.trim() : null;
  } catch {
    return null;
  }
}
