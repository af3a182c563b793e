/**
 * qwen-code 0.24.4 compacts its history at this share of its context window at the latest (the default of its
 * `context.autoCompactThreshold`; smaller windows compact earlier); the rest must hold one call's output.
 */
export const HARNESS_COMPACT_THRESHOLD = 0.85;

/**
 * Room the harness's own prompt needs before any conversation: qwen-code 0.24.4's system prompt and tool definitions
 * measure about 13,200 Qwen3 tokens (4,785 + 8,443 in its first recorded request).
 */
export const HARNESS_PROMPT_TOKENS = 16_384;

/**
 * The context qwen-code is told: compaction at `HARNESS_COMPACT_THRESHOLD` of it must leave one call's output bound
 * within the served context, and it never exceeds the served context.
 */
export function harnessWindow(contextTokens: number, maxOutputTokens: number): number {
  return Math.min(contextTokens, Math.floor((contextTokens - maxOutputTokens) / HARNESS_COMPACT_THRESHOLD));
}
