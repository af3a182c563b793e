import { z } from 'zod';

import type { Thread } from '../../records/threads.js';
import { contentText, firstUserMessage, userPromptText } from '../../harness/qwen-code.js';
import { DELEGATION_TOOL } from '../../workflow/delegation-tool.js';
import { html, type SafeHtml } from '../../html/html.js';
import type { ChatMessage, MessageContent, ToolCall } from '../../model/types.js';
import type { ProxyLogRow } from '../../proxy/log-row.js';

/** What the proxy log says of one model call: how long it took and what it cost. */
export interface CallFacts {
  durationMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  reasoningTokens: number | null;
  retried: boolean;
}

/** One row's facts: a few numbers, kept where the row itself (with its request body) is not. */
export function callFactOf(row: Pick<ProxyLogRow, 'durationMs' | 'response' | 'attempts'>): CallFacts {
  const usage = row.response?.kind === 'completion' ? row.response.completion.usage : null;
  return {
    durationMs: row.durationMs,
    promptTokens: usage?.prompt_tokens ?? null,
    completionTokens: usage?.completion_tokens ?? null,
    reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
    retried: (row.attempts?.length ?? 1) > 1,
  };
}

const DelegationArguments = z.looseObject({
  description: z.string().optional(),
  prompt: z.string().optional(),
  subagent_type: z.string().optional(),
});

interface Delegation {
  call: ToolCall;
  description: string;
  prompt: string | null;
}

function delegationOf(call: ToolCall): Delegation | undefined {
  if (call.function.name !== DELEGATION_TOOL) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(call.function.arguments);
  } catch {
    decoded = {};
  }
  const parsed = DelegationArguments.safeParse(decoded);
  const value = parsed.success ? parsed.data : {};
  return {
    call,
    description: value.description ?? value.subagent_type ?? 'subagent',
    prompt: value.prompt ?? null,
  };
}

/**
 * Which subagent thread each delegation started: the unclaimed subagent thread whose task prompt is the call's
 * `prompt`, else the first unclaimed one that began after the call (the harness may rewrite the prompt).
 */
export function matchDelegations(allThreads: readonly Thread[]): Map<string, Thread> {
  // Conversations agent code posted itself neither delegate nor answer a delegation.
  const threads = allThreads.filter((thread) => thread.forged !== true);
  const subagents = threads.filter((thread) => thread.role === 'subagent');
  const claimed = new Set<string>();
  const matches = new Map<string, Thread>();
  const delegations: Array<{ delegation: Delegation; seq: number }> = [];
  for (const thread of threads) {
    for (const segment of thread.segments) {
      for (const response of segment.responses) {
        const message = segment.messages[response.messageIndex];
        if (message?.role !== 'assistant') continue;
        for (const call of message.tool_calls ?? []) {
          const delegation = delegationOf(call);
          if (delegation) delegations.push({ delegation, seq: response.seq });
        }
      }
    }
  }
  const promptOf = (thread: Thread): string => {
    const first = thread.segments[0] ? firstUserMessage(thread.segments[0].messages) : undefined;
    return first?.content ? userPromptText(first.content).trim() : '';
  };
  for (const { delegation, seq } of delegations) {
    const wanted = delegation.prompt?.trim();
    const byPrompt = wanted
      ? subagents.find((thread) => !claimed.has(thread.threadId) && promptOf(thread).includes(wanted))
      : undefined;
    const match =
      byPrompt ?? subagents.find((thread) => !claimed.has(thread.threadId) && thread.firstSeq > seq);
    if (match) {
      claimed.add(match.threadId);
      matches.set(delegation.call.id, match);
    }
  }
  return matches;
}

export interface ConversationContext {
  facts: Map<number, CallFacts>;
  delegations: Map<string, Thread>;
  /** Threads already shown inside a delegation, so the page does not show them twice. */
  shown: Set<string>;
}

const number = new Intl.NumberFormat('en-US');

/** A thread's conversation, segment by segment; a delegation holds the subagent's own thread, folded. */
export function renderThread(thread: Thread, context: ConversationContext, depth = 0): SafeHtml {
  context.shown.add(thread.threadId);
  const usage = thread.usage;
  const segments = thread.segments.map((segment, index) => {
    const responses = new Map(segment.responses.map((response) => [response.messageIndex, response]));
    const toolNames = new Map<string, string>();
    const messages = segment.messages.map((message, messageIndex) => {
      if (message.role === 'assistant')
        for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
      const response = responses.get(messageIndex);
      return renderMessage(message, {
        stats: response
          ? callStats(response.seq, response.finishReason, response.truncated, context.facts)
          : '',
        toolName: message.role === 'tool' ? toolNames.get(message.tool_call_id) : undefined,
        context,
        depth,
      });
    });
    const heading =
      thread.segments.length > 1
        ? html`<h3>Segment ${index + 1} of ${thread.segments.length}</h3>
            <p class="muted">
              The harness started this part of the conversation afresh (its history was compacted or
              replaced).
            </p>`
        : '';
    return html`${heading}${messages}`;
  });
  return html`<div class="thread" id="${threadAnchor(thread.threadId)}">
    <p class="muted">
      ${threadLabel(thread)} ${thread.threadId} · ${thread.calls} model calls ·
      ${number.format(usage.promptTokens)} prompt, ${number.format(usage.completionTokens)} completion
      (${number.format(usage.reasoningTokens)} reasoning) tokens
    </p>
    ${segments}
  </div>`;
}

export function threadAnchor(threadId: string): string {
  return `thread-${threadId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function callStats(
  seq: number,
  finishReason: string | null,
  truncated: boolean,
  facts: Map<number, CallFacts>,
): SafeHtml {
  const fact = facts.get(seq);
  const parts = [`call #${seq}`];
  if (fact) {
    parts.push(`${number.format(Math.round(fact.durationMs))} ms`);
    if (fact.promptTokens !== null) parts.push(`${number.format(fact.promptTokens)} prompt tokens`);
    if (fact.completionTokens !== null) {
      const reasoning = fact.reasoningTokens ? ` (${number.format(fact.reasoningTokens)} reasoning)` : '';
      parts.push(`${number.format(fact.completionTokens)} completion tokens${reasoning}`);
    }
    if (fact.retried) parts.push('retried by the proxy');
  }
  parts.push(`finish: ${finishReason ?? 'unknown'}`);
  return html`<span class="call-stats">${parts.join(' · ')}</span
    >${truncated ? html` <span class="bad">cut by the output limit</span>` : ''}`;
}

interface MessageOptions {
  stats: SafeHtml | '';
  toolName: string | undefined;
  context: ConversationContext;
  depth: number;
}

function renderMessage(message: ChatMessage, options: MessageOptions): SafeHtml {
  switch (message.role) {
    case 'system':
      return html`<div class="message system">
        <details>
          <summary>
            <span class="who">system prompt</span>
            <span class="muted">(${number.format(contentText(message.content).length)} characters)</span>
          </summary>
          <div class="text">${contentText(message.content)}</div>
        </details>
      </div>`;
    case 'user':
      return html`<div class="message user">
        <span class="who">user</span>${renderUserContent(message.content)}
      </div>`;
    case 'tool':
      return html`<div class="message tool">
        <span class="who">result of ${options.toolName ?? 'a tool call'}</span>
        <span class="muted">${message.tool_call_id}</span>${foldLong(contentText(message.content))}
      </div>`;
    case 'assistant': {
      const reasoning = message.reasoning_content
        ? html`<details class="reasoning">
            <summary>reasoning (${number.format(message.reasoning_content.length)} characters)</summary>
            <div class="text">${message.reasoning_content}</div>
          </details>`
        : '';
      const text = contentText(message.content);
      const calls = (message.tool_calls ?? []).map((call) => renderToolCall(call, options));
      return html`<div class="message assistant">
        <span class="who">assistant</span
        >${options.stats}${reasoning}${text ? html`<div class="text">${text}</div>` : ''}${calls}
      </div>`;
    }
  }
}

/** qwen-code's reminders (skills, context, date) are folded so the prompt itself stands out. */
function renderUserContent(content: MessageContent): SafeHtml {
  const texts =
    typeof content === 'string'
      ? [content]
      : content.map((part) => (typeof part.text === 'string' ? part.text : JSON.stringify(part)));
  return html`${texts.map((text) =>
    text.trimStart().startsWith('<system-reminder>')
      ? html`<details>
          <summary class="muted">system reminder (${number.format(text.length)} characters)</summary>
          <div class="text">${text}</div>
        </details>`
      : promptText(text),
  )}`;
}

/** A task prompt runs to pages; folded under its first line, so the team's work is what the page opens on. */
function promptText(text: string): SafeHtml {
  if (text.length <= 1200) return html`<div class="text">${text}</div>`;
  const firstLine = text.trim().split('\n')[0]!.slice(0, 160);
  return html`<details>
    <summary>${firstLine} <span class="muted">(${number.format(text.length)} characters)</span></summary>
    <div class="text">${text}</div>
  </details>`;
}

function foldLong(text: string): SafeHtml {
  if (text.length <= 1500) return html`<pre>${text}</pre>`;
  return html`<details>
      <summary>${number.format(text.length)} characters</summary>
      <pre>${text}</pre>
    </details>
    <pre>${text.slice(0, 600)}…</pre>`;
}

function renderToolCall(call: ToolCall, options: MessageOptions): SafeHtml {
  const delegation = delegationOf(call);
  if (delegation) {
    const thread = options.context.delegations.get(call.id);
    const inner =
      thread && options.depth < 4
        ? renderThread(thread, options.context, options.depth + 1)
        : html`<p class="muted">No subagent thread of this episode matches this delegation.</p>`;
    return html`<details class="delegation">
      <summary>delegation to ${delegation.description}</summary>
      <details>
        <summary class="muted">the prompt it was given</summary>
        <div class="text">${delegation.prompt ?? call.function.arguments}</div>
      </details>
      ${inner}
    </details>`;
  }
  return html`<details class="tool-call">
    <summary>tool call: ${call.function.name} <span class="muted">${call.id}</span></summary>
    <pre>${prettyArguments(call.function.arguments)}</pre>
  </details>`;
}

function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** `subagent thread`, or what marks a conversation agent code posted through the proxy itself. */
export function threadLabel(thread: Thread): string {
  return thread.forged === true
    ? `forged ${thread.role} thread (posted by agent code, not the harness; kept out of every count and of training)`
    : `${thread.role} thread`;
}
