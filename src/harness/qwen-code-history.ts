/**
 * What qwen-code 0.24.4 writes into a conversation itself, beside the model's responses and the tools' results, as
 * observed on its requests. Telling a conversation the harness built from one that agent code posted to the proxy
 * rests on these: every other assistant turn must be a response the model gave.
 */

/**
 * Assistant turns the harness writes, not the model: the acknowledgement after a compacted history (it carries the
 * tool calls of the response the history was cut after, when one was pending) and the memory extractor's.
 */
export const HARNESS_ASSISTANT_TEXTS: ReadonlySet<string> = new Set([
  'Got it. Thanks for the additional context!',
  'Acknowledged.',
]);

/** What follows the summary in the user message that opens a compacted history. */
export const COMPACTION_RESUME_TRAILER =
  'Resume the prior task using the summary above. Continue from the last in-flight step; do not acknowledge the summary, do not re-introduce, do not greet the user again.';

/**
 * The first user message of a history compacted from `summary` (the text of the summarising call's response): the
 * summary without its `<analysis>` block, then the trailer.
 */
export function compactionResumeText(summary: string): string {
  const stripped = summary
    .replace(/<analysis>[\s\S]*?<\/analysis>\s*/g, '')
    .replace(/<analysis>[\s\S]*$/g, '')
    .trim();
  return `${stripped.length > 0 ? stripped : '[Summary unavailable]'}\n\n${COMPACTION_RESUME_TRAILER}`;
}
