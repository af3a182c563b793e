import { z } from 'zod';

import { HARNESS_PROMPT_TOKENS } from '../harness/context-window.js';
import type { RunConfig } from '../config/run-config.js';
import { chatCompletionParameters } from '../model/request-parameters.js';
import type { SamplingParams } from '../model/types.js';
import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';
import { PROBE_TOOL, PROBE_TOOL_NAME, PROBE_WORD, probeMessages, type ProbeKind } from './probe-protocol.js';
import { reasoningFlags, toolCallFlags } from './server-advice.js';
import { errorText, getJson, postJson, postStream, shownUrl, type ServerTarget } from './server-wire.js';

/** The model listing, the served context, and the probes of tool calls, reasoning, streamed usage and the seed. */

const ListedModels = z.looseObject({
  data: z.array(z.looseObject({ id: z.string(), max_model_len: z.number().int().nullish() })),
});

const WireToolCall = z.looseObject({
  function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
});

const WireMessage = z.looseObject({
  content: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  tool_calls: z.array(WireToolCall).nullish(),
});

const WireCompletion = z.looseObject({
  choices: z.array(z.looseObject({ message: WireMessage, finish_reason: z.string().nullish() })).min(1),
});

const WireChunk = z.looseObject({
  choices: z
    .array(z.looseObject({ delta: WireMessage.partial().nullish(), finish_reason: z.string().nullish() }))
    .nullish(),
  usage: z.looseObject({ completion_tokens: z.number() }).nullish(),
});

export interface Listing {
  result: CheckResult;
  /** The model the probes ask for: the configured one, else (when allowed) one the server lists; null: none. */
  probeModel: string | null;
  servedContext: number | null;
}

/** `any-served`: a stage that serves its generation itself (rsi, eval) may find another model listed before it. */
export type ListingMode = 'required' | 'any-served';

export async function checkListing(
  target: ServerTarget,
  endpoint: EndpointUnderCheck,
  mode: ListingMode,
): Promise<Listing> {
  const name = 'served';
  const answer = await getJson(target, '/models');
  const fail = (seen: string, fix: string): Listing => ({
    result: check.fail(name, seen, fix),
    probeModel: null,
    servedContext: null,
  });
  if (!answer.ok) {
    return fail(
      `cannot reach the server: ${answer.error}`,
      `start the model server at ${shownUrl(endpoint.baseUrl)}, or correct the role's baseUrl`,
    );
  }
  if (answer.status === 401 || answer.status === 403) {
    return fail(
      `GET /v1/models answered ${answer.status}: the server wants a key it was not given`,
      "set the role's apiKeyEnv to the variable holding the server's key (vLLM's --api-key)",
    );
  }
  const listed = ListedModels.safeParse(answer.body);
  if (answer.status !== 200 || !listed.success) {
    return fail(
      `GET /v1/models answered ${answer.status}${listed.success ? '' : ', not a model list'}: ${errorText(answer)}`,
      "point the role's baseUrl at an OpenAI-compatible server's /v1",
    );
  }
  const models = listed.data.data;
  const found = models.find((model) => model.id === endpoint.model);
  if (found) {
    return {
      result: check.pass(name, `GET /v1/models lists ${endpoint.model}`),
      probeModel: endpoint.model,
      servedContext: found.max_model_len ?? null,
    };
  }
  const names = models.length > 0 ? models.map((model) => model.id).join(', ') : 'no model';
  const fix = `serve it under this name (vLLM's --served-model-name ${endpoint.model}), or name a listed model in the configuration`;
  if (mode === 'any-served' && models.length > 0) {
    return {
      result: check.warn(
        name,
        `GET /v1/models lists ${names}, not ${endpoint.model} (the run serves the generation it needs itself); probed ${models[0]!.id}`,
        null,
      ),
      probeModel: models[0]!.id,
      servedContext: models[0]!.max_model_len ?? null,
    };
  }
  return fail(`GET /v1/models lists ${names}, not ${endpoint.model}`, fix);
}

/** The context the roles on this endpoint need at the least, against what the server lists. */
export function checkContext(
  config: RunConfig,
  endpoint: EndpointUnderCheck,
  served: number | null,
): CheckResult {
  const { budgets } = config;
  const needs: Array<[number, string]> = [];
  if (endpoint.team) {
    needs.push([
      HARNESS_PROMPT_TOKENS + budgets.maxOutputTokensPerCall,
      `the harness's prompt ${HARNESS_PROMPT_TOKENS} + budgets.maxOutputTokensPerCall ${budgets.maxOutputTokensPerCall}`,
    ]);
  }
  if (endpoint.roles.some((role) => role === 'judge' || role.startsWith('evaluation judge'))) {
    needs.push([
      2 * budgets.judgeBundleTokens + budgets.judgeMaxTokens,
      `two bundles of budgets.judgeBundleTokens ${budgets.judgeBundleTokens} + budgets.judgeMaxTokens ${budgets.judgeMaxTokens}, before the judge's prompt`,
    ]);
  }
  if (endpoint.roles.includes('optimizer')) {
    needs.push([
      budgets.optimizerEvidenceTokens + budgets.optimizerMaxTokens,
      `budgets.optimizerEvidenceTokens ${budgets.optimizerEvidenceTokens} + budgets.optimizerMaxTokens ${budgets.optimizerMaxTokens}, before the optimizer's prompt`,
    ]);
  }
  const [need, because] = needs.reduce((most, next) => (next[0] > most[0] ? next : most), [0, ''] as [
    number,
    string,
  ]);
  const configured = budgets.contextWindowSize;
  if (served === null) {
    return check.pass(
      'context',
      `the server lists no max_model_len: budgets.contextWindowSize ${configured} is taken as the model's context`,
    );
  }
  if (served < need) {
    return check.fail(
      'context',
      `max_model_len ${served}, but ${because} need ${need}`,
      `start vLLM with --max-model-len ${need} or more, or lower those budgets`,
    );
  }
  return check.pass(
    'context',
    `max_model_len ${served}${served < configured ? ` (below budgets.contextWindowSize ${configured}: the run uses ${served})` : ''}; the roles here need at least ${need}`,
  );
}

/** The request fields of a probe, sampled as the role samples, with a small output bound. */
function probeBody(
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

/** Text in the content that is a tool call the server did not parse: a tag, or JSON naming the probe's tool. */
export function toolCallText(content: string): string | null {
  const tag = /<tool_call>|<function=|<\|tool_call|\[TOOL_CALLS\]|<\|python_tag\|>/.exec(content);
  const json = content.includes(PROBE_TOOL_NAME) && /\{[\s\S]*\}/.test(content);
  if (!tag && !json) return null;
  const start = tag ? tag.index : Math.max(0, content.indexOf('{'));
  return excerpt(content.slice(start));
}

function excerpt(text: string, length = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > length ? `${flat.slice(0, length)}…` : flat);
}

function failedRequest(
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

/** The tool-call probe: asked to call a tool, with `tool_choice: "auto"` as the harness sends it. */
export async function checkToolCalls(
  target: ServerTarget,
  model: string,
  endpoint: EndpointUnderCheck,
): Promise<CheckResult> {
  const name = 'tool calls';
  const answer = await postJson(target, '/chat/completions', {
    ...probeBody('tool-call', model, endpoint.sampling, { maxTokens: 2048 }),
    tools: [PROBE_TOOL],
    tool_choice: 'auto',
  });
  if (!answer.ok)
    return check.fail(name, `the tool-call probe failed: ${answer.error}`, 'make the server answer');
  if (answer.status !== 200) {
    const message = errorText(answer);
    const refusedAuto = /auto-tool-choice|tool-call-parser|tool.choice/i.test(message);
    return failedRequest(
      name,
      'a request with tools and tool_choice "auto"',
      answer.status,
      message,
      refusedAuto ? toolCallFlags(model) : undefined,
    );
  }
  const parsed = WireCompletion.safeParse(answer.body);
  if (!parsed.success) return check.fail(name, 'the answer is not a chat completion', "see the server's log");
  const [choice] = parsed.data.choices;
  const calls = choice!.message.tool_calls ?? [];
  const content = choice!.message.content ?? '';
  const call = calls.find((candidate) => candidate.function.name === PROBE_TOOL_NAME);
  if (call) {
    const word = wordOf(call.function.arguments ?? '');
    return word === PROBE_WORD
      ? check.pass(name, `structured in message.tool_calls: ${PROBE_TOOL_NAME}({"word": "${PROBE_WORD}"})`)
      : check.warn(
          name,
          `structured in message.tool_calls, with arguments ${excerpt(call.function.arguments ?? '')}`,
          'the tool parser reads calls but not their arguments: check that --tool-call-parser is the model family’s',
        );
  }
  const asText = toolCallText(content);
  if (asText) {
    return check.fail(
      name,
      `the call came back as text in the content, not in message.tool_calls: ${asText}; the team would never delegate`,
      toolCallFlags(model),
    );
  }
  if (choice!.finish_reason === 'length') {
    return check.warn(
      name,
      'the answer reached max_tokens before any tool call',
      'a model that thinks this long before one call is slow for the team; check the chat template and the sampling',
    );
  }
  return check.fail(
    name,
    `asked to call ${PROBE_TOOL_NAME}, the model answered without a call: ${excerpt(content || '(empty)')}`,
    `${toolCallFlags(model)}, and serve the model with its own chat template (one that renders tools)`,
  );
}

function wordOf(argumentsText: string): unknown {
  try {
    return (JSON.parse(argumentsText) as { word?: unknown }).word;
  } catch {
    return undefined;
  }
}

/** The streamed probe: the reasoning apart from the content when thinking is on, and the usage chunk at the end. */
export async function checkStreamedReply(
  target: ServerTarget,
  model: string,
  endpoint: EndpointUnderCheck,
): Promise<CheckResult[]> {
  const answer = await postStream(target, {
    ...probeBody('reply', model, endpoint.sampling, { maxTokens: 1024 }),
    stream: true,
    stream_options: { include_usage: true },
  });
  if (!answer.ok) {
    const failed = check.fail(
      'streamed usage',
      `the streamed probe failed: ${answer.error}`,
      'make the server answer',
    );
    return [{ ...failed, check: 'reasoning' }, failed];
  }
  const { status, events } = answer.answer;
  if (status !== 200) {
    const failed = failedRequest(
      'streamed usage',
      'a streamed request',
      status,
      errorText({ body: parseJson(answer.answer.text), text: answer.answer.text }),
    );
    return [{ ...failed, check: 'reasoning' }, failed];
  }
  let content = '';
  let reasoning = '';
  let reasoningField: string | null = null;
  let usage: number | null = null;
  for (const event of events) {
    const chunk = WireChunk.safeParse(event);
    if (!chunk.success) continue;
    if (chunk.data.usage) usage = chunk.data.usage.completion_tokens;
    for (const choice of chunk.data.choices ?? []) {
      const delta = choice.delta ?? {};
      content += delta.content ?? '';
      for (const field of ['reasoning_content', 'reasoning'] as const) {
        const piece = delta[field];
        if (piece) {
          reasoning += piece;
          reasoningField ??= field;
        }
      }
    }
  }
  return [reasoningResult(model, endpoint, content, reasoning, reasoningField), usageResult(endpoint, usage)];
}

function reasoningResult(
  model: string,
  endpoint: EndpointUnderCheck,
  content: string,
  reasoning: string,
  field: string | null,
): CheckResult {
  const name = 'reasoning';
  const inline = /<\/?think>/.test(content);
  if (!endpoint.thinking) {
    return inline
      ? check.warn(
          name,
          `thinking is off here, yet the content holds thinking: ${excerpt(content)}`,
          reasoningFlags(model),
        )
      : check.skip(name, 'thinking is off (enableThinking: false) for the roles here');
  }
  if (inline) {
    return check.fail(
      name,
      `thinking is on and the thinking arrives inside the content: ${excerpt(content)}`,
      reasoningFlags(model),
    );
  }
  if (reasoning.length > 0) {
    return check.pass(
      name,
      `${reasoning.length} characters of reasoning in ${field}, apart from the content`,
    );
  }
  return check.warn(
    name,
    'thinking is on (enableThinking) but no reasoning came back: the model may not think, or its chat template ignores enable_thinking',
    `serve a thinking model with its own chat template and ${reasoningFlags(model).replace(/^start vLLM with /, '')}, or set enableThinking: false`,
  );
}

function usageResult(endpoint: EndpointUnderCheck, usage: number | null): CheckResult {
  const name = 'streamed usage';
  if (usage !== null)
    return check.pass(name, `the stream ended with a usage chunk (${usage} completion tokens)`);
  const seen =
    'asked with stream_options.include_usage, the stream ended without a usage chunk: episodes would count no tokens, and budgets.episodeOutputBudget would never stop one';
  const fix =
    'serve with vLLM, which honours stream_options (add --enable-force-include-usage to send usage always), and remove any proxy between mass and the server that strips stream_options';
  return endpoint.team ? check.fail(name, seen, fix) : check.warn(name, seen, fix);
}

/** Two identical requests with the run's seed: the same answer, or a run that cannot be replayed. */
export async function checkSeed(
  target: ServerTarget,
  model: string,
  endpoint: EndpointUnderCheck,
  seed: number,
): Promise<CheckResult> {
  const name = 'seed';
  const body = {
    ...probeBody('sample', model, endpoint.sampling, { maxTokens: 48, enableThinking: false }),
    seed,
  };
  if (endpoint.sampling.temperature === 0) {
    return check.pass(name, 'temperature 0: greedy sampling, the seed plays no part');
  }
  const answers: string[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await postJson(target, '/chat/completions', body);
    if (!answer.ok) return check.warn(name, `the seed probe failed: ${answer.error}`, null);
    const parsed = WireCompletion.safeParse(answer.body);
    if (answer.status !== 200 || !parsed.success) {
      return check.warn(name, `a request with a seed answered ${answer.status}: ${errorText(answer)}`, null);
    }
    const message = parsed.data.choices[0]!.message;
    answers.push(`${message.reasoning_content ?? message.reasoning ?? ''}\n${message.content ?? ''}`);
  }
  if (answers[0] === answers[1]) {
    return check.pass(
      name,
      `two requests with seed ${seed} at temperature ${endpoint.sampling.temperature ?? 'default'} gave the same answer`,
    );
  }
  return check.warn(
    name,
    `two requests with seed ${seed} gave different answers (${excerpt(answers[0]!, 40)} and ${excerpt(answers[1]!, 40)}): episodes cannot be replayed exactly`,
    'vLLM samples a request with its seed: remove any proxy that drops the field, and start vLLM with --seed <n>; batch-dependent kernels can still differ (a run stays valid, only not reproducible)',
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
