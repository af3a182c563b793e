import { UserError } from '../errors.js';
import type { ReasoningEffort } from './reasoning-effort.js';
import type { SamplingParams } from './types.js';

/**
 * What each provider's API accepts of the sampling parameters, and how it names them. The paper's settings (Qwen's
 * `top_k`, the chat template's thinking switch) are vLLM's; OpenAI's chat API has neither and bounds output with
 * `max_completion_tokens`; Anthropic's Messages API (version 2026-10-21, which the SDK sends) takes no sampling
 * parameters at all, only `max_tokens`, `thinking` and an effort. A parameter the provider does not accept is refused
 * here, before the request is sent, rather than dropped: a silently ignored setting would make a run differ from its
 * configuration without anyone knowing.
 */
export type ChatProvider = 'openai-compatible' | 'openai' | 'anthropic';

const PROVIDER_NAMES: Record<ChatProvider, string> = {
  'openai-compatible': 'an OpenAI-compatible server',
  openai: "OpenAI's chat API",
  anthropic: "Anthropic's Messages API",
};

/** The sampling fields each provider accepts (the neutral names of `SamplingParams`). */
const ACCEPTED: Record<ChatProvider, ReadonlySet<keyof SamplingParams>> = {
  'openai-compatible': new Set([
    'temperature',
    'topP',
    'topK',
    'seed',
    'maxTokens',
    'stop',
    'enableThinking',
    'reasoningEffort',
    'extra',
  ]),
  openai: new Set(['temperature', 'topP', 'seed', 'maxTokens', 'stop', 'reasoningEffort', 'extra']),
  // Anthropic has no seed; a seed is taken but not sent (it also draws judges' A/B orders, which stay reproducible).
  anthropic: new Set(['maxTokens', 'stop', 'thinking', 'reasoningEffort', 'seed', 'extra']),
};

/** Anthropic's `output_config.effort` levels. */
const ANTHROPIC_EFFORTS: ReadonlySet<ReasoningEffort> = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/** The smallest thinking budget Anthropic accepts. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/** Why these settings cannot be sent to the provider, one line each (empty: they can). */
export function samplingProblems(provider: ChatProvider, sampling: SamplingParams): string[] {
  const problems: string[] = [];
  const accepted = ACCEPTED[provider];
  for (const [field, value] of Object.entries(sampling)) {
    if (value === undefined || accepted.has(field as keyof SamplingParams)) continue;
    problems.push(`${PROVIDER_NAMES[provider]} does not accept ${field}`);
  }
  if (provider === 'anthropic') {
    if (sampling.reasoningEffort !== undefined && !ANTHROPIC_EFFORTS.has(sampling.reasoningEffort)) {
      problems.push(
        `${PROVIDER_NAMES.anthropic} takes the effort low, medium, high, xhigh or max, not ${sampling.reasoningEffort}`,
      );
    }
    const thinking = sampling.thinking;
    if (typeof thinking === 'object') {
      if (!Number.isInteger(thinking.budgetTokens) || thinking.budgetTokens < ANTHROPIC_MIN_THINKING_BUDGET) {
        problems.push(`a thinking budget must be at least ${ANTHROPIC_MIN_THINKING_BUDGET} tokens`);
      }
      if (sampling.maxTokens !== undefined && thinking.budgetTokens >= sampling.maxTokens) {
        problems.push(
          `the thinking budget (${thinking.budgetTokens}) must be below the output bound max_tokens (${sampling.maxTokens})`,
        );
      }
    }
  }
  return problems;
}

function assertAccepted(provider: ChatProvider, sampling: SamplingParams): void {
  const problems = samplingProblems(provider, sampling);
  if (problems.length > 0) {
    throw new UserError(
      `the request's sampling cannot be sent: ${problems.join('; ')}. Change the role's sampling block (roles.<role>.sampling) for this provider`,
    );
  }
}

/** The body fields of a chat-completions request for vLLM-style servers (`openai-compatible`) or OpenAI itself. */
export function chatCompletionParameters(
  provider: 'openai-compatible' | 'openai',
  sampling: SamplingParams,
): Record<string, unknown> {
  assertAccepted(provider, sampling);
  const body: Record<string, unknown> = {};
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.topP !== undefined) body.top_p = sampling.topP;
  if (sampling.topK !== undefined) body.top_k = sampling.topK;
  if (sampling.seed !== undefined) body.seed = sampling.seed;
  if (sampling.maxTokens !== undefined) {
    // OpenAI deprecated max_tokens, and its reasoning models refuse it.
    body[provider === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = sampling.maxTokens;
  }
  if (sampling.stop !== undefined) body.stop = sampling.stop;
  if (sampling.reasoningEffort !== undefined) body.reasoning_effort = sampling.reasoningEffort;
  const { chat_template_kwargs: kwargs, ...extra } = sampling.extra ?? {};
  if (sampling.enableThinking !== undefined) {
    body.chat_template_kwargs = {
      ...(isObject(kwargs) ? kwargs : {}),
      enable_thinking: sampling.enableThinking,
    };
  } else if (kwargs !== undefined) body.chat_template_kwargs = kwargs;
  return { ...body, ...extra };
}

/** The body fields of an Anthropic Messages request; `max_tokens` is required there. */
export function anthropicParameters(
  sampling: SamplingParams,
  defaultMaxTokens: number,
): Record<string, unknown> {
  const maxTokens = sampling.maxTokens ?? defaultMaxTokens;
  assertAccepted('anthropic', { ...sampling, maxTokens });
  const body: Record<string, unknown> = { max_tokens: maxTokens };
  if (sampling.stop !== undefined) body.stop_sequences = sampling.stop;
  const thinking = sampling.thinking;
  if (thinking === 'adaptive' || thinking === 'disabled') body.thinking = { type: thinking };
  else if (thinking !== undefined) body.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  if (sampling.reasoningEffort !== undefined) body.output_config = { effort: sampling.reasoningEffort };
  return { ...body, ...sampling.extra };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
