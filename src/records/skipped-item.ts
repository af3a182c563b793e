import { z } from 'zod';

/** Why part of an episode produced no training windows. */
export const SkipReason = z.enum([
  /** The orchestrator's prompt was not found in its first user message: the workflow text could not be removed. */
  'prompt-not-found',
  /** The system prompt and first user message take more than the allowed share of a window. */
  'header-too-long',
  /** One assistant turn does not fit in a window even with no context. */
  'turn-too-long',
  /** The chat template failed, or its output did not split into the conversation's turns as verified. */
  'render-mismatch',
  /** Single-agent data keeps the orchestrator's thread only. */
  'not-orchestrator',
  /** Agent code posted the thread's requests to the proxy itself: a context the harness never built. */
  'forged',
]);
export type SkipReason = z.infer<typeof SkipReason>;

export const SkippedItem = z.object({
  episode: z.string(),
  thread: z.string(),
  role: z.enum(['orchestrator', 'subagent', 'auxiliary']),
  threadSegment: z.number().int().optional(),
  querySegment: z.number().int().optional(),
  /** The assistant turn, for `turn-too-long`. */
  messageIndex: z.number().int().optional(),
  /** Supervised tokens lost, where known. */
  supervisedTokens: z.number().int().optional(),
  reason: SkipReason,
  detail: z.string(),
});
export type SkippedItem = z.infer<typeof SkippedItem>;
