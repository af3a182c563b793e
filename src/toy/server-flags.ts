import { existsSync } from 'node:fs';

import { isRecord } from '../model/stream-accumulator.js';
import type { ReplySpec } from './steps.js';

/**
 * How an emulated vLLM was started, flag by flag; each left out changes what its answers look like as vLLM's do.
 * The default is every flag given but runtime LoRA: a server that parses tool calls and reasoning, honours
 * `stream_options` and the request's seed, and has no LoRA routes.
 */
export interface ServerFlags {
  /**
   * `parsed`: `--enable-auto-tool-choice --tool-call-parser <the model's>`, calls in `message.tool_calls`. `text`: no
   * parser for the model's format (none, or another family's), so the model's `<tool_call>` text stays in the content.
   * `refused`: without `--enable-auto-tool-choice`, vLLM answers `tool_choice: "auto"` with a 400.
   */
  toolCalls?: 'parsed' | 'text' | 'refused';
  /** `parsed`: `--reasoning-parser`, reasoning in its own field. `inline`: `<think>…</think>` at the content's head. */
  reasoning?: 'parsed' | 'inline';
  /** false: `stream_options.include_usage` dropped on the way (a proxy that strips it): no usage chunk. */
  streamUsage?: boolean;
  /** `ignored`: the request's seed never reaches the sampler (a proxy that drops it). */
  seed?: 'honoured' | 'ignored';
  /**
   * `absent`: no `VLLM_ALLOW_RUNTIME_LORA_UPDATING`, so no LoRA routes (404). `not-enabled`: the routes, but no
   * `--enable-lora`: a load fails with "LoRA is not enabled.". `enabled`: both; adapters load from existing folders.
   */
  runtimeLora?: 'absent' | 'not-enabled' | 'enabled';
}

/** vLLM's error body (`ErrorResponse`), with its status. */
export interface VllmAnswer {
  status: number;
  body: unknown;
}

function vllmError(status: number, type: string, message: string): VllmAnswer {
  return { status, body: { error: { message, type, param: null, code: status } } };
}

/** The reply as the server sends it: what its missing parsers leave in the content. */
export function asServed(reply: ReplySpec, flags: ServerFlags): ReplySpec {
  let served = reply;
  if (flags.toolCalls === 'text' && (served.toolCalls?.length ?? 0) > 0) {
    // Qwen's (Hermes-style) tool-call format, as the model writes it; unparsed, it is plain content.
    const calls = served.toolCalls!.map((call) => {
      const args = typeof call.arguments === 'string' ? parsedOrText(call.arguments) : call.arguments;
      return `<tool_call>\n${JSON.stringify({ name: call.name, arguments: args })}\n</tool_call>`;
    });
    const { toolCalls: _calls, ...rest } = served;
    served = {
      ...rest,
      content: [served.content ?? '', ...calls].filter(Boolean).join('\n'),
      finishReason: served.finishReason ?? 'stop',
    };
  }
  if (flags.reasoning === 'inline' && served.reasoning !== undefined) {
    const { reasoning, ...rest } = served;
    served = { ...rest, content: `<think>\n${reasoning}\n</think>\n\n${served.content ?? ''}` };
  }
  return served;
}

/** vLLM's refusal of `tool_choice: "auto"` (its default when tools are given) without `--enable-auto-tool-choice`. */
export function toolChoiceRefusal(body: Record<string, unknown>, flags: ServerFlags): VllmAnswer | undefined {
  if (flags.toolCalls !== 'refused') return undefined;
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  const choice = body.tool_choice ?? (tools ? 'auto' : 'none');
  if (choice !== 'auto') return undefined;
  return vllmError(
    400,
    'BadRequestError',
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
  );
}

/** The body with what the server ignores taken out, as the sampler sees it. */
export function asSampled(body: unknown, flags: ServerFlags): unknown {
  if (flags.seed !== 'ignored' || !isRecord(body) || !('seed' in body)) return body;
  const { seed: _seed, ...rest } = body;
  return rest;
}

/** Runtime LoRA loading as vLLM's `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` answer it. */
export class RuntimeLora {
  /** Adapter name → the path it was loaded from. */
  readonly loaded = new Map<string, string>();

  constructor(private readonly flags: ServerFlags) {}

  /** The answer to a request on a LoRA route, or undefined when the path is not one (or the routes are absent). */
  answer(method: string, path: string, body: unknown): VllmAnswer | undefined {
    const mode = this.flags.runtimeLora ?? 'absent';
    if (mode === 'absent' || method !== 'POST') return undefined;
    const request = isRecord(body) ? body : {};
    const name = typeof request.lora_name === 'string' ? request.lora_name : '';
    if (path === '/v1/load_lora_adapter') {
      const adapterPath = typeof request.lora_path === 'string' ? request.lora_path : '';
      if (!name || !adapterPath) {
        return vllmError(400, 'InvalidUserInput', "Both 'lora_name' and 'lora_path' must be provided.");
      }
      if (this.loaded.has(name)) {
        return vllmError(400, 'InvalidUserInput', `The lora adapter '${name}' has already been loaded.`);
      }
      if (mode === 'not-enabled') return vllmError(400, 'BadRequestError', 'LoRA is not enabled.');
      if (!existsSync(adapterPath)) {
        return vllmError(
          404,
          'NotFoundError',
          `Loading lora ${name} failed: No adapter found for ${adapterPath}`,
        );
      }
      this.loaded.set(name, adapterPath);
      return { status: 200, body: `Success: LoRA adapter '${name}' added successfully.` };
    }
    if (path === '/v1/unload_lora_adapter') {
      if (!name) {
        return vllmError(
          400,
          'InvalidUserInput',
          "either 'lora_name' and 'lora_int_id' needs to be provided.",
        );
      }
      if (!this.loaded.delete(name)) {
        return vllmError(404, 'NotFoundError', `The lora adapter '${name}' cannot be found.`);
      }
      return { status: 200, body: `Success: LoRA adapter '${name}' removed successfully.` };
    }
    return undefined;
  }
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
