import type { IncomingHttpHeaders } from 'node:http';

import { isRecord } from '../model/stream-accumulator.js';

/**
 * The scripted server's strict mode: it refuses a request the way the provider's real API would, with HTTP 400 and
 * that API's style of error, so a test proves each role's requests are ones the provider accepts.
 *
 * - `openai`: OpenAI's chat API. Unknown fields are refused ("Unrecognized request argument supplied"), so are
 *   message fields it does not define; for reasoning models (`reasoningModel`, the default) `max_tokens` is refused
 *   in favour of `max_completion_tokens`, and temperature and top_p only take their default, 1.
 * - `anthropic`: the Messages API at version 2026-10-21 (what the SDK sends): no sampling parameters (temperature,
 *   top_p, top_k: "Extra inputs are not permitted"), `max_tokens` required, a thinking budget of at least 1,024 and
 *   below `max_tokens`.
 * - `openai-compatible`: vLLM's chat-completions fields. vLLM itself only logs and ignores a field it does not know;
 *   strict mode refuses it, so a setting the server would silently drop shows up in a test. With `maxModelLength`,
 *   a request whose prompt (estimated at four characters a token) and `max_tokens` exceed it is refused as vLLM does.
 */
export type StrictProvider = 'openai-compatible' | 'openai' | 'anthropic';

export interface StrictMode {
  provider: StrictProvider;
  /** OpenAI: the model is a reasoning model (default true). */
  reasoningModel?: boolean;
}

export interface StrictRejection {
  status: 400;
  body: unknown;
}

/** The API version whose rules the Anthropic mode follows. */
export const STRICT_ANTHROPIC_VERSION = '2026-10-21';

const OPENAI_FIELDS = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

const OPENAI_MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id']),
};

/** vLLM's own additions to the OpenAI fields (sampling, chat template, structured output). */
const VLLM_FIELDS = new Set([
  ...OPENAI_FIELDS,
  'best_of',
  'use_beam_search',
  'top_k',
  'min_p',
  'repetition_penalty',
  'length_penalty',
  'stop_token_ids',
  'include_stop_str_in_output',
  'ignore_eos',
  'min_tokens',
  'skip_special_tokens',
  'spaces_between_special_tokens',
  'truncate_prompt_tokens',
  'prompt_logprobs',
  'allowed_token_ids',
  'bad_words',
  'echo',
  'add_generation_prompt',
  'continue_final_message',
  'add_special_tokens',
  'documents',
  'chat_template',
  'chat_template_kwargs',
  'mm_processor_kwargs',
  'structured_outputs',
  'guided_json',
  'guided_regex',
  'guided_choice',
  'guided_grammar',
  'priority',
  'request_id',
  'include_reasoning',
  'return_tokens_as_token_ids',
  'return_token_ids',
  'cache_salt',
  'kv_transfer_params',
  'vllm_xargs',
]);

const ANTHROPIC_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'metadata',
  'output_config',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'thinking',
  'tool_choice',
  'tools',
]);

/** The 400 the provider would answer this request with, or null when it would accept it. */
export function strictRejection(
  mode: StrictMode,
  request: { body: Record<string, unknown>; headers: IncomingHttpHeaders; maxModelLength?: number },
): StrictRejection | null {
  switch (mode.provider) {
    case 'openai':
      return openAIRejection(request.body, mode.reasoningModel ?? true);
    case 'anthropic':
      return anthropicRejection(request.body, request.headers);
    case 'openai-compatible':
      return vllmRejection(request.body, request.maxModelLength);
  }
}

function openAIRejection(body: Record<string, unknown>, reasoningModel: boolean): StrictRejection | null {
  const error = (message: string, param: string | null, code: string | null) => ({
    status: 400 as const,
    body: { error: { message, type: 'invalid_request_error', param, code } },
  });
  const unknown = Object.keys(body).find((field) => !OPENAI_FIELDS.has(field));
  if (unknown) return error(`Unrecognized request argument supplied: ${unknown}`, null, null);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message)) continue;
    const allowed = OPENAI_MESSAGE_FIELDS[String(message.role)];
    if (!allowed) {
      return error(`Invalid value: '${String(message.role)}'.`, `messages[${index}].role`, 'invalid_value');
    }
    const extra = Object.keys(message).find((field) => !allowed.has(field));
    if (extra) {
      return error(
        `Unrecognized request argument supplied: messages[${index}].${extra}`,
        `messages[${index}].${extra}`,
        'unknown_parameter',
      );
    }
  }
  if (!reasoningModel) return null;
  if (body.max_tokens !== undefined) {
    return error(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    );
  }
  for (const field of ['temperature', 'top_p']) {
    const value = body[field];
    if (value !== undefined && value !== 1) {
      return error(
        `Unsupported value: '${field}' does not support ${String(value)} with this model. Only the default (1) value is supported.`,
        field,
        'unsupported_value',
      );
    }
  }
  return null;
}

function anthropicRejection(
  body: Record<string, unknown>,
  headers: IncomingHttpHeaders,
): StrictRejection | null {
  const error = (message: string) => ({
    status: 400 as const,
    body: {
      type: 'error',
      error: { type: 'invalid_request_error', message },
      request_id: 'req_scripted_strict',
    },
  });
  const version = headers['anthropic-version'];
  if (version !== STRICT_ANTHROPIC_VERSION) {
    return error(
      `anthropic-version: the scripted server's strict mode follows ${STRICT_ANTHROPIC_VERSION}, the request asked for ${String(version)}`,
    );
  }
  const unknown = Object.keys(body).find((field) => !ANTHROPIC_FIELDS.has(field));
  if (unknown) return error(`${unknown}: Extra inputs are not permitted`);
  if (body.max_tokens === undefined) return error('max_tokens: Field required');
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return error('max_tokens: Input should be a valid integer greater than or equal to 1');
  }
  const thinking = body.thinking;
  if (thinking !== undefined) {
    if (!isRecord(thinking) || !['enabled', 'disabled', 'adaptive'].includes(String(thinking.type))) {
      return error(
        "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'",
      );
    }
    if (thinking.type === 'enabled') {
      const budget = thinking.budget_tokens;
      if (typeof budget !== 'number' || budget < 1024) {
        return error('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      }
      if (maxTokens <= budget) return error('`max_tokens` must be greater than `thinking.budget_tokens`.');
    }
  }
  return null;
}

function vllmRejection(
  body: Record<string, unknown>,
  maxModelLength: number | undefined,
): StrictRejection | null {
  const error = (message: string) => ({
    status: 400 as const,
    body: { error: { message, type: 'BadRequestError', param: null, code: 400 } },
  });
  const unknown = Object.keys(body).find((field) => !VLLM_FIELDS.has(field));
  if (unknown) {
    return error(
      `The following fields were present in the request but are not served (strict mode; vLLM would ignore them): ${unknown}`,
    );
  }
  if (maxModelLength === undefined) return null;
  const promptTokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion = body.max_completion_tokens ?? body.max_tokens;
  const completionTokens = typeof completion === 'number' ? completion : 0;
  if (promptTokens + completionTokens > maxModelLength) {
    return error(
      `This model's maximum context length is ${maxModelLength} tokens. However, you requested ${promptTokens + completionTokens} tokens (${promptTokens} in the messages, ${completionTokens} in the completion). Please reduce the length of the messages or completion.`,
    );
  }
  return null;
}
