import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';
import { excerpt, failedRequest, probeBody, WireCompletion } from './probe-exchange.js';
import { PROBE_TOOL, PROBE_TOOL_NAME, PROBE_WORD } from './probe-protocol.js';
import { toolCallFlags } from './server-advice.js';
import { errorText, postJson, type ServerTarget } from './server-wire.js';

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

/** Text in the content that is a tool call the server did not parse: a tag, or JSON naming the probe's tool. */
export function toolCallText(content: string): string | null {
  const tag = /<tool_call>|<function=|<\|tool_call|\[TOOL_CALLS\]|<\|python_tag\|>/.exec(content);
  const json = content.includes(PROBE_TOOL_NAME) && /\{[\s\S]*\}/.test(content);
  if (!tag && !json) return null;
  const start = tag ? tag.index : Math.max(0, content.indexOf('{'));
  return excerpt(content.slice(start));
}
