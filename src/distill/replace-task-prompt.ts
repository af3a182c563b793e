import type { ChatMessage, ContentPart, UserMessage } from '../model/types.js';

export type PromptReplacement =
  { ok: true; messages: ChatMessage[]; partIndex: number | null } | { ok: false; error: string };

/**
 * The orchestrator's first user message with the prompt it was given (task, workflow, teacher directive) replaced
 * by the bare task, so the model learns to organise the work from the task alone. qwen-code sends that message as
 * `<system-reminder>` parts followed by the prompt, sometimes with whitespace added at its end; the prompt must be
 * found exactly once, in one part, or nothing is replaced and the conversation is not used. Every other message,
 * and every other part of this one, is left as it was.
 */
export function replaceTaskPrompt(
  messages: readonly ChatMessage[],
  prompt: string,
  bareTask: string,
): PromptReplacement {
  const userIndex = messages.findIndex((message) => message.role === 'user');
  if (userIndex < 0) return { ok: false, error: 'the conversation has no user message' };
  const user = messages[userIndex] as UserMessage;
  const texts: string[] =
    typeof user.content === 'string'
      ? [user.content]
      : (user.content as ContentPart[]).map((part) =>
          part.type === 'text' && typeof part.text === 'string' ? part.text : '',
        );

  for (const [found, replacement] of variants(prompt, bareTask)) {
    if (found === '') continue;
    const hits = texts.flatMap((text, index) => occurrences(text, found).map(() => index));
    if (hits.length === 0) continue;
    if (hits.length > 1) {
      return {
        ok: false,
        error: `the episode's prompt occurs ${hits.length} times in the first user message; which one to replace is ambiguous`,
      };
    }
    const partIndex = hits[0]!;
    const replaced = texts[partIndex]!.replace(found, () => replacement);
    const content =
      typeof user.content === 'string'
        ? replaced
        : user.content.map((part, index) => (index === partIndex ? { ...part, text: replaced } : part));
    const result = [...messages];
    result[userIndex] = { ...user, content } as ChatMessage;
    return { ok: true, messages: result, partIndex: typeof user.content === 'string' ? null : partIndex };
  }
  return {
    ok: false,
    error: "the episode's prompt (prompt.md) was not found in the orchestrator's first user message",
  };
}

/** The prompt as given, then without trailing, then without surrounding whitespace; the bare task trimmed alike. */
function variants(prompt: string, bareTask: string): Array<[string, string]> {
  const candidates: Array<[string, string]> = [
    [prompt, bareTask],
    [prompt.trimEnd(), bareTask.trimEnd()],
    [prompt.trim(), bareTask.trim()],
  ];
  return candidates.filter(([found], index) => candidates.findIndex(([other]) => other === found) === index);
}

function occurrences(text: string, found: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(found); at >= 0; at = text.indexOf(found, at + found.length)) {
    positions.push(at);
  }
  return positions;
}
