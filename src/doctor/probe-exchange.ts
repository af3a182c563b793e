import { z } from 'zod';

import { chatCompletionParameters } from '../model/request-parameters.js';
import type { SamplingParams } from '../model/types.js';
import { check, type CheckResult } from './check-report.js';
import { probeMessages, type ProbeKind } from './probe-protocol.js';

/** A probe's request, the shapes of the chat answers the checks read, and how a check quotes what came back. */

const WireToolCall = z.looseObject({
  function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
});

const WireMessage = z.looseObject({
  content: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  tool_calls: z.array(WireToolCall).nullish(),
});

export const WireCompletion = z.looseObject({
  choices: z.array(z.looseObject({ message: WireMessage, finish_reason: z.string().nullish() })).min(1),
});

export const WireChunk = z.looseObject({
  choices: z
    .array(z.looseObject({ delta: WireMessage.partial().nullish(), finish_reason: z.string().nullish() }))
    .nullish(),
  usage: z.looseObject({ completion_tokens: z.number() }).nullish(),
});

/** The request fields of a probe, sampled as the role samples, with a small output bound. */
export function probeBody(
  kind: ProbeKind,
  model: string,
  sampling: SamplingParams,
  overrides: Partial<SamplingParams>,
): Record<string, unknown> {
  return {
    model,
    messages: probeMessages(kind),
    ...chatCompletionParameters('openai-compatible', { ...sampling, seed: undefined, ...overrides }),
  };
}

export function excerpt(text: string, length = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > length ? `${flat.slice(0, length)}…` : flat);
}

export function failedRequest(
  name: string,
  what: string,
  status: number,
  message: string,
  fix?: string,
): CheckResult {
  return check.fail(
    name,
    `${what} answered ${status}: ${message}`,
    fix ?? "see the model server's log for why it refused the request",
  );
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
