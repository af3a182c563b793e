import { z } from 'zod';

import { samplingProblems, type ChatProvider } from '../model/request-parameters.js';
import { REASONING_EFFORTS } from '../model/reasoning-effort.js';
import type { SamplingParams } from '../model/types.js';

/**
 * A role's own sampling block (`roles.<role>.sampling`). Every field is optional: a role on an OpenAI-compatible
 * server (vLLM) takes what its block leaves unset from the run's `sampling` (the paper's Qwen settings); a role on
 * OpenAI's or Anthropic's API takes only what its block sets, since those APIs refuse the Qwen settings. The output
 * bound stays in `budgets` (maxOutputTokensPerCall, judgeMaxTokens, optimizerMaxTokens).
 */
export const RoleSampling = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    topP: z.number().gt(0).max(1).optional(),
    topK: z.number().int().optional().describe('vLLM only'),
    enableThinking: z
      .boolean()
      .optional()
      .describe("vLLM only: the chat template's thinking switch (chat_template_kwargs.enable_thinking)"),
    reasoningEffort: z
      .enum(REASONING_EFFORTS)
      .optional()
      .describe("OpenAI's reasoning_effort (also vLLM's); Anthropic's output_config.effort (low…max)"),
    thinking: z
      .union([z.enum(['adaptive', 'disabled']), z.object({ budgetTokens: z.number().int() }).strict()])
      .optional()
      .describe(
        'Anthropic only: adaptive, disabled, or { budgetTokens: n } (at least 1024, below the output bound)',
      ),
  })
  .strict();
export type RoleSampling = z.infer<typeof RoleSampling>;

/** The run's shared sampling (`sampling` at the top of the configuration): the paper's, for vLLM-served roles. */
export interface SharedSampling {
  temperature: number;
  topP: number;
  topK: number;
  enableThinking: boolean;
}

/**
 * A role's request settings for its provider: its own block over the run's shared settings on vLLM-style servers,
 * its own block alone on OpenAI's and Anthropic's APIs, and the role's output bound.
 */
export function resolveSampling(
  provider: ChatProvider,
  shared: SharedSampling,
  block: RoleSampling | undefined,
  maxTokens: number,
): SamplingParams {
  const own = block ?? {};
  if (provider === 'openai-compatible') {
    return withoutUndefined({
      temperature: own.temperature ?? shared.temperature,
      topP: own.topP ?? shared.topP,
      topK: own.topK ?? shared.topK,
      maxTokens,
      enableThinking: own.enableThinking ?? shared.enableThinking,
      reasoningEffort: own.reasoningEffort,
      thinking: own.thinking,
    });
  }
  return withoutUndefined({ ...own, maxTokens });
}

/** What is wrong with a role's block for its provider, one line each (empty: nothing). */
export function roleSamplingProblems(
  provider: ChatProvider,
  block: RoleSampling | undefined,
  maxTokens: number,
): string[] {
  if (!block) return [];
  return samplingProblems(provider, { ...block, maxTokens });
}

function withoutUndefined(sampling: SamplingParams): SamplingParams {
  return Object.fromEntries(
    Object.entries(sampling).filter(([, value]) => value !== undefined),
  ) as SamplingParams;
}
