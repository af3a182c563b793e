import { isRecord } from '../model/stream-accumulator.js';
import type { ChatMessage, MessageContent } from '../model/types.js';

/**
 * Facts about the agent harness, qwen-code 0.24.4, as observed on its requests: how to tell its threads apart and
 * where the task prompt sits. Kept in one place because trajectories, the scripted team and the toy model all
 * depend on them, and a new harness version may change them.
 */

export const QWEN_CODE_VERSION = '0.24.4';

export type ThreadRole = 'orchestrator' | 'subagent' | 'auxiliary';

const ORCHESTRATOR_MARKER = /^You are Qwen Code\b/;
const SUBAGENT_MARKER = /^You are a general-purpose subagent\b|^You are an? [\w -]*subagent\b/i;

/**
 * The role of a conversation, from its system prompt: the main session is the orchestrator, delegated workers are
 * subagents, and the harness's own helpers (the managed-memory extractor, summarisers) are auxiliary.
 */
export function threadRoleOf(systemPrompt: string): ThreadRole {
  if (ORCHESTRATOR_MARKER.test(systemPrompt)) return 'orchestrator';
  if (/managed memory extraction/i.test(systemPrompt)) return 'auxiliary';
  if (SUBAGENT_MARKER.test(systemPrompt)) return 'subagent';
  return 'auxiliary';
}

export function contentText(content: MessageContent | null | undefined): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/**
 * The text the user actually wrote in a first user message. qwen-code sends an array of parts: several
 * `<system-reminder>` parts (skills, context, date) and then the prompt; the prompt is the parts that are not reminders.
 */
export function userPromptText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => !text.trimStart().startsWith('<system-reminder>'))
    .join('');
}

export function systemPromptOf(messages: ChatMessage[]): string {
  const first = messages[0];
  return first?.role === 'system' ? contentText(first.content) : '';
}

export function firstUserMessage(messages: ChatMessage[]): ChatMessage | undefined {
  return messages.find((message) => message.role === 'user');
}
