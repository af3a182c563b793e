import { join } from 'node:path';

import { z } from 'zod';

import { OpenAICompatibleModel } from '../model/openai-compatible.js';
import type { ChatMessage, ChatModel, ChatResponse } from '../model/types.js';
import { readProxyLog } from '../proxy/log-row.js';
import { startRecordingProxy } from '../proxy/recording-proxy.js';
import { openRun } from '../store/run-store.js';
import { startScriptedServer, type ScriptedRequest } from '../testing/scripted-server.js';
import { step, type Step } from '../testing/steps.js';

/**
 * The demo as it stands: a toy model on the scripted server plays a small team (an orchestrator that delegates
 * to two subagents), every call goes through the recording proxy, and the run directory records it all in
 * resumable steps. Tools are simulated by this driver; real harness episodes arrive with `mass episode`.
 */

const DemoConfig = z.object({ model: z.string(), seed: z.number().int() });
const TOY_MODEL = 'mass-toy';
const ORCHESTRATOR_SYSTEM = 'You are the orchestrator of a research team. (toy output)';
const SUBAGENT_SYSTEM = 'You are a general-purpose subagent. (toy output)';
const TASK = 'Estimate the dose-response curve in data/doses.csv and report the EC50 with an interval.';
const SUBAGENT_JOBS = [
  { role: 'data auditor', job: 'Check data/doses.csv for missing values and outliers.' },
  { role: 'modeller', job: 'Fit a four-parameter logistic curve and report the EC50.' },
];

export const DemoSummary = z.object({
  requests: z.number().int(),
  threads: z.record(z.string(), z.number().int()),
  tokens: z.record(
    z.string(),
    z.object({ prompt: z.number(), completion: z.number(), reasoning: z.number() }),
  ),
  logFile: z.string(),
});
export type DemoSummary = z.infer<typeof DemoSummary>;

/** The toy model's answer to one request: delegate, work, or conclude, depending on the conversation so far. */
function toyTeamResponder(request: ScriptedRequest): Step {
  const body = z
    .object({ messages: z.array(z.looseObject({ role: z.string(), content: z.unknown() })) })
    .parse(request.body);
  const system = String(body.messages[0]?.content ?? '');
  const toolResults = body.messages.filter((message) => message.role === 'tool').length;
  if (system === ORCHESTRATOR_SYSTEM) {
    const next = SUBAGENT_JOBS[toolResults];
    if (next) {
      return step.toolCall(
        'agent',
        { description: next.role, prompt: next.job, subagent_type: 'general-purpose' },
        {
          reasoning: `Stage ${toolResults + 1}: the ${next.role} should go first because later stages need it.`,
        },
      );
    }
    return step.text('EC50 = 3.1 mg/L (95% CI 2.7-3.6); see research_report.md. (toy output)', {
      reasoning: 'Both reports are back and consistent; summarise.',
    });
  }
  if (toolResults === 0) {
    return step.toolCall(
      'run_shell_command',
      { command: 'python3 analysis.py' },
      { reasoning: 'Run the analysis first.' },
    );
  }
  return step.text('Done: results written to results/metrics.json. (toy output)', {
    reasoning: 'The script succeeded.',
  });
}

async function converse(
  model: ChatModel,
  system: string,
  user: string,
  runTool: (response: ChatResponse) => Promise<string>,
) {
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
  for (let turn = 0; turn < 8; turn++) {
    let response: ChatResponse | undefined;
    for await (const event of model.stream({
      model: TOY_MODEL,
      messages,
      sampling: { temperature: 0.6, topP: 0.95, topK: 20 },
    })) {
      if (event.type === 'finish') response = event.response;
    }
    if (!response) throw new Error('the toy model ended a stream without finishing');
    messages.push(response.message);
    const call = response.message.tool_calls?.[0];
    if (!call) return typeof response.message.content === 'string' ? response.message.content : '';
    messages.push({ role: 'tool', tool_call_id: call.id, content: await runTool(response) });
  }
  throw new Error('the toy conversation did not finish in 8 turns');
}

export async function runFoundationDemo(options: {
  runsDirectory: string;
  name: string;
}): Promise<DemoSummary> {
  const run = openRun({
    runsDirectory: options.runsDirectory,
    name: options.name,
    configSchema: DemoConfig,
    config: { model: TOY_MODEL, seed: 0 },
    command: 'mass demo',
  });
  try {
    const logFile = run.path('episodes', 'demo-0', 'requests.jsonl');
    await run.step(
      'episode/demo-0',
      async () => {
        const server = await startScriptedServer({ responder: toyTeamResponder, models: [TOY_MODEL] });
        const proxy = await startRecordingProxy({
          upstream: server.url,
          listen: { host: '127.0.0.1', port: 0 },
          logFile,
        });
        try {
          const model = new OpenAICompatibleModel({ baseUrl: `${proxy.url}/v1` });
          await converse(model, ORCHESTRATOR_SYSTEM, TASK, async (response) => {
            const call = response.message.tool_calls![0]!;
            const { prompt } = z.object({ prompt: z.string() }).parse(JSON.parse(call.function.arguments));
            return converse(model, SUBAGENT_SYSTEM, prompt, async () => 'exit code 0 (simulated)');
          });
        } finally {
          await proxy.close();
          await server.close();
        }
      },
      { dir: 'episodes/demo-0' },
    );
    return await run.step('summary', () => summarise(logFile), { output: DemoSummary });
  } finally {
    run.close();
  }
}

async function summarise(logFile: string): Promise<DemoSummary> {
  const rows = await readProxyLog(logFile);
  const threads: Record<string, number> = {};
  const tokens: DemoSummary['tokens'] = {};
  for (const row of rows) {
    const request = z
      .object({ model: z.string(), messages: z.array(z.looseObject({ content: z.unknown() })) })
      .parse(row.request);
    const system = String(request.messages[0]?.content ?? '');
    const role = system === ORCHESTRATOR_SYSTEM ? 'orchestrator calls' : 'subagent calls';
    threads[role] = (threads[role] ?? 0) + 1;
    const usage = row.response?.kind === 'completion' ? row.response.completion.usage : null;
    const totals = (tokens[request.model] ??= { prompt: 0, completion: 0, reasoning: 0 });
    totals.prompt += usage?.prompt_tokens ?? 0;
    totals.completion += usage?.completion_tokens ?? 0;
    totals.reasoning += usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  }
  return { requests: rows.length, threads, tokens, logFile: join('episodes', 'demo-0', 'requests.jsonl') };
}
