import { writeFile } from 'node:fs/promises';

import { ProxyLogEncoder } from '../../src/proxy/log-encoder.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';
import type { Random } from '../../src/ranking/seeded-random.js';
import { prose } from '../support/prose.js';

/** The size of a team's episode: its subagents, and the calls of each thread. */
export interface TeamShape {
  subagents: number;
  /** Calls of each subagent thread: 150 in the paper's long episodes. */
  subagentCalls: number;
  /** Calls of the orchestrator: one delegation per subagent, then its own turns and its answer. */
  orchestratorCalls: number;
}

/** What one episode's proxy log holds, and what it would have held before. */
export interface TeamLogFigures {
  rows: number;
  /** `requests.jsonl` as the proxy writes it now (rows of schemaVersion 2). */
  storedBytes: number;
  /** The same rows with every request body whole, as earlier versions wrote them (and `mass log export` does). */
  wholeBodyBytes: number;
  /** Each distinct message, answer and tool list once: what the conversations hold. */
  distinctBytes: number;
  /** Each row's own facts (times, status, usage, attempts; the answer's id and finish reason): no two rows share them. */
  rowFactsBytes: number;
  /** The longest request's prompt, in tokens (the usage the model server reported). */
  longestPromptTokens: number;
  promptTokens: number;
  completionTokens: number;
  delegations: number;
}

/** Qwen3 reads about 2.6 characters of this text per token (measured by the data-builder bench). */
const CHARACTERS_PER_TOKEN = 2.6;
const tokensOf = (characters: number) => Math.round(characters / CHARACTERS_PER_TOKEN);

type Message = Record<string, unknown>;

/**
 * One team episode as qwen-code runs it and the proxy records it: the orchestrator delegates to each subagent in
 * turn (its `agent` call's prompt opens the subagent's conversation), each subagent works through its calls (a turn
 * of reasoning, a sentence and a shell command; the command's output, about 600 tokens a call in all), then answers
 * with a report, which the orchestrator receives as the call's result. Every request sends its thread's whole
 * conversation and tool list, as the harness does. The rows come in the order the calls were made.
 */
export function teamRows(
  random: Random,
  lexicon: string[],
  episodePrompt: string,
  shape: TeamShape,
): ProxyLogRow[] {
  const text = (characters: number) => prose(random, lexicon, characters);
  const toolList = (names: string[]) =>
    names.map((name) => ({
      type: 'function',
      function: { name, description: text(1_200), parameters: { type: 'object', properties: {} } },
    }));
  const subagentTools = toolList([
    'read_file',
    'write_file',
    'edit',
    'glob',
    'grep_search',
    'run_shell_command',
    'web_fetch',
    'list_directory',
    'read_many_files',
    'save_memory',
    'todo_write',
    'record_artifact',
  ]);
  const orchestratorTools = [...toolList(['agent', 'list_agents']), ...subagentTools];
  const rows: ProxyLogRow[] = [];
  let clock = Date.parse('2026-11-02T09:00:00.000Z');

  /** One call: the request as the harness sends it, the model's answer, the row the proxy writes. */
  const call = (messages: Message[], tools: unknown[], answer: Message, promptCharacters: number) => {
    const durationMs = Math.round(1_500 + random() * 6_000);
    const startedAt = new Date(clock).toISOString();
    clock += durationMs + Math.round(random() * 2_000);
    const completionCharacters = JSON.stringify(answer).length;
    rows.push({
      schemaVersion: 1,
      seq: rows.length,
      startedAt,
      endedAt: new Date(clock).toISOString(),
      durationMs,
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      model: 'qwen3-8b',
      stream: true,
      request: {
        model: 'qwen3-8b',
        messages: [...messages],
        tools,
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0.6,
        top_p: 0.95,
      },
      requestIsJson: true,
      response: {
        kind: 'completion',
        completion: {
          id: `chatcmpl-${rows.length}`,
          model: 'qwen3-8b',
          message: answer as never,
          finish_reason: 'tool_calls' in answer ? 'tool_calls' : 'stop',
          usage: {
            prompt_tokens: tokensOf(promptCharacters),
            completion_tokens: tokensOf(completionCharacters),
            completion_tokens_details: {
              reasoning_tokens: tokensOf(String(answer.reasoning_content).length),
            },
          },
        },
      },
      bytes: { request: promptCharacters, response: completionCharacters * 3 },
      clientDisconnected: false,
      usageInjected: false,
      error: null,
      attempts: [{ status: 200, error: null, startedAfterMs: 0.4, durationMs, delayMs: null }],
      refusal: null,
    });
  };
  const turn = (id: string, tool: string, argumentsValue: Record<string, unknown>) => ({
    role: 'assistant',
    content: text(100),
    reasoning_content: text(150 + random() * 500),
    tool_calls: [
      { id, type: 'function', function: { name: tool, arguments: JSON.stringify(argumentsValue) } },
    ],
  });

  /** A subagent's thread: its calls, and the report it ends with. */
  const subagent = (index: number, prompt: string): string => {
    const messages: Message[] = [
      { role: 'system', content: `You are a general-purpose subagent for Qwen Code. ${text(3_000)}` },
      { role: 'user', content: [{ type: 'text', text: prompt }] },
    ];
    let characters = JSON.stringify(messages).length + JSON.stringify(subagentTools).length;
    for (let number = 0; number < shape.subagentCalls; number++) {
      const last = number === shape.subagentCalls - 1;
      const answer = last
        ? { role: 'assistant', content: text(2_000), reasoning_content: text(400) }
        : turn(`call_${index}_${number}`, 'run_shell_command', { command: text(170), is_background: false });
      call(messages, subagentTools, answer, characters);
      if (last) return answer.content;
      const result = {
        role: 'tool',
        tool_call_id: `call_${index}_${number}`,
        content: text(200 + random() * 1_400),
      };
      messages.push(answer, result);
      characters += JSON.stringify(answer).length + JSON.stringify(result).length;
    }
    return '';
  };

  const messages: Message[] = [
    { role: 'system', content: `You are Qwen Code, an interactive CLI agent. ${text(12_000)}` },
    {
      role: 'user',
      content: [
        { type: 'text', text: `<system-reminder>\n${text(800)}\n</system-reminder>` },
        { type: 'text', text: episodePrompt },
      ],
    },
  ];
  let characters = JSON.stringify(messages).length + JSON.stringify(orchestratorTools).length;
  for (let number = 0; number < shape.orchestratorCalls; number++) {
    const id = `call_lead_${number}`;
    const delegating = number < shape.subagents;
    const last = number === shape.orchestratorCalls - 1;
    const prompt = `Stage ${number + 1} of the team's work. ${text(1_000)}`;
    const answer = last
      ? { role: 'assistant', content: text(1_500), reasoning_content: text(600) }
      : delegating
        ? turn(id, 'agent', { description: `stage ${number + 1}`, prompt, subagent_type: 'general-purpose' })
        : turn(id, 'run_shell_command', { command: text(170), is_background: false });
    call(messages, orchestratorTools, answer, characters);
    if (last) break;
    const output = delegating ? subagent(number, prompt) : text(200 + random() * 1_400);
    const result = { role: 'tool', tool_call_id: id, content: output };
    messages.push(answer, result);
    characters += JSON.stringify(answer).length + JSON.stringify(result).length;
  }
  return rows;
}

/**
 * Writes `rows` as the recording proxy does (each row through the same encoder, remembered once written) and
 * measures the log against the whole-body rows of earlier versions and against the distinct content.
 */
export async function writeTeamLog(file: string, rows: readonly ProxyLogRow[]): Promise<TeamLogFigures> {
  const encoder = new ProxyLogEncoder();
  const lines: string[] = [];
  let wholeBodyBytes = 0;
  let rowFactsBytes = 0;
  const distinct = new Set<string>();
  for (const row of rows) {
    const { schemaVersion: _version, request, ...fields } = row;
    const encoded = encoder.encode(fields, { json: true, value: request }, []);
    lines.push(encoded.line);
    encoded.remember();
    wholeBodyBytes += Buffer.byteLength(JSON.stringify(row)) + 1;
    const body = request as { messages: unknown[]; tools: unknown[] };
    for (const message of body.messages) distinct.add(JSON.stringify(message));
    distinct.add(JSON.stringify(body.tools));
    if (row.response?.kind === 'completion') distinct.add(JSON.stringify(row.response.completion.message));
    const facts =
      row.response?.kind === 'completion'
        ? {
            ...fields,
            response: { ...row.response, completion: { ...row.response.completion, message: null } },
          }
        : fields;
    rowFactsBytes += Buffer.byteLength(JSON.stringify(facts));
  }
  const text = `${lines.join('\n')}\n`;
  await writeFile(file, text);
  const completions = rows.flatMap((row) =>
    row.response?.kind === 'completion' ? [row.response.completion] : [],
  );
  return {
    rows: rows.length,
    storedBytes: Buffer.byteLength(text),
    wholeBodyBytes,
    distinctBytes: [...distinct].reduce((sum, item) => sum + Buffer.byteLength(item), 0),
    rowFactsBytes,
    longestPromptTokens: Math.max(...completions.map((completion) => completion.usage?.prompt_tokens ?? 0)),
    promptTokens: completions.reduce((sum, completion) => sum + (completion.usage?.prompt_tokens ?? 0), 0),
    completionTokens: completions.reduce(
      (sum, completion) => sum + (completion.usage?.completion_tokens ?? 0),
      0,
    ),
    delegations: completions.filter((completion) =>
      (completion.message.tool_calls ?? []).some((toolCall) => toolCall.function.name === 'agent'),
    ).length,
  };
}
