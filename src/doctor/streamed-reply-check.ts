import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';
import { excerpt, failedRequest, parseJson, probeBody, WireChunk } from './probe-exchange.js';
import { reasoningFlags } from './server-advice.js';
import { errorText, postStream, type ServerTarget } from './server-wire.js';

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
