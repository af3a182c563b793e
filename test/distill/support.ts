import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { Template } from '@huggingface/jinja';

import {
  buildTrainingData,
  defaultModelDirectory,
  loadChatTemplateModel,
  type BuildTrainingDataOptions,
  type ChatTemplateModel,
  type EpisodeSource,
} from '../../src/distill/index.js';
import { type TrainingDataStats } from '../../src/records/index.js';
import type { SftConversation, TrainingWindow } from '../../src/records/index.js';
import { buildThreads, Thread } from '../../src/records/threads.js';
import type { AssistantMessage, ChatMessage, MessageContent } from '../../src/model/types.js';
import { readProxyLog } from '../support/fixtures.js';

export const fixtures = fileURLToPath(new URL('../fixtures/distill', import.meta.url));
export const tasksDirectory = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));
const qwenCodeLog = fileURLToPath(new URL('../fixtures/qwen-code-0.24.4/requests.jsonl', import.meta.url));

let model: Promise<ChatTemplateModel> | undefined;
/** Qwen3's template and tokenizer, loaded once per test file. */
export function qwen3(): Promise<ChatTemplateModel> {
  return (model ??= loadChatTemplateModel());
}

/** Qwen3's chat template on its own, straight from its file: the reference the builder's text is compared with. */
export function referenceTemplate(): Template {
  const config = JSON.parse(readFileSync(`${defaultModelDirectory()}/tokenizer_config.json`, 'utf8')) as {
    chat_template: string;
  };
  return new Template(config.chat_template);
}

export function readThreads(episode: string): Thread[] {
  return readFileSync(`${fixtures}/${episode}/threads.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => Thread.parse(JSON.parse(line)));
}

/** The threads of the older recorded log (orchestrator and two subagents, no workflow). */
export function qwenCodeThreads(): Thread[] {
  return buildThreads(readProxyLog(qwenCodeLog));
}

/** A recorded episode of the tiny-sum task as the builder sees it, its bare task taken from the real task. */
export function fixtureEpisode(
  episode: 'team-a' | 'single',
  split: 'train' | 'validation' = 'train',
): EpisodeSource {
  const prompt = readFileSync(`${fixtures}/${episode}/prompt.md`, 'utf8');
  const bareTask = `${prompt.slice(0, prompt.indexOf('## Team workflow')).trimEnd()}\n`;
  return {
    episodeId: episode,
    taskId: 'tiny-sum',
    split,
    team: episode !== 'single',
    prompt,
    bareTask: episode === 'single' ? prompt : bareTask,
    threads: readThreads(episode),
  };
}

export interface Collected {
  windows: TrainingWindow[];
  conversations: SftConversation[];
  stats: TrainingDataStats;
}

/** Runs the builder into memory. */
export async function collect(
  episodes: EpisodeSource[],
  options: Omit<BuildTrainingDataOptions, 'sink' | 'model'> & { model?: ChatTemplateModel } = {},
): Promise<Collected> {
  const windows: TrainingWindow[] = [];
  const conversations: SftConversation[] = [];
  const stats = await buildTrainingData(episodes, {
    ...options,
    model: options.model ?? (await qwen3()),
    sink: {
      window: (window) => void windows.push(window),
      conversation: (record) => void conversations.push(record),
    },
  });
  return { windows, conversations, stats };
}

/** Content as vLLM gives a string-content template: text parts joined by newlines. */
export function plainText(content: MessageContent | null): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n');
}

/**
 * The messages as plain chat-template input, written independently of the builder's own conversion: tool-call
 * arguments as the objects a server hands its template.
 */
export function templateInput(messages: ChatMessage[]): Array<Record<string, unknown>> {
  return messages.map((message) => {
    const input: Record<string, unknown> = { ...message, content: plainText(message.content) };
    if (message.role === 'assistant' && message.tool_calls) {
      input.tool_calls = message.tool_calls.map((call) => ({
        ...call,
        function: { name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown },
      }));
    }
    return input;
  });
}

/** JSON as Python's `json.dumps` writes it by default, which `tojson` follows: `", "` and `": "` between items. */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item)}`);
    return `{${entries.join(', ')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What the model wrote in an assistant turn after the last user query, as Qwen3's template writes it: reasoning in
 * a think block, the text, each tool call, the end-of-turn token. Built by hand from the message, not from the
 * template, so it checks the builder's spans.
 */
export function expectedOutput(message: AssistantMessage, isLastMessage: boolean): string {
  const content = plainText(message.content);
  const reasoning = message.reasoning_content ?? '';
  // The template writes the think block for the final message always, for earlier ones only when they reasoned.
  let text =
    reasoning !== '' || isLastMessage
      ? `<think>\n${trimNewlines(reasoning)}\n</think>\n\n${content.replace(/^\n+/, '')}`
      : content;
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    if (index > 0 || content !== '') text += '\n';
    const args = pythonJson(JSON.parse(call.function.arguments));
    text += `<tool_call>\n{"name": "${call.function.name}", "arguments": ${args}}\n</tool_call>`;
  }
  return `${text}<|im_end|>`;
}

/**
 * What the model wrote in an assistant turn after the last user query, as the Qwen3.5-style fixture's template writes
 * it, after its generation prompt `<|im_start|>assistant\n<think>\n`: the reasoning, the think block's end, the
 * text, each tool call with one parameter block per argument, the end-of-turn token. Built by hand from the message.
 */
export function expectedQwen35Output(message: AssistantMessage): string {
  const content = plainText(message.content).replace(/^\n+/, '');
  let text = `${trimNewlines(message.reasoning_content ?? '')}\n</think>\n\n${content}`;
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    if (index > 0) text += '\n';
    else if (content.trim() !== '') text += '\n\n';
    const parameters = Object.entries(JSON.parse(call.function.arguments) as Record<string, unknown>).map(
      ([name, value]) =>
        `<parameter=${name}>\n${typeof value === 'string' ? value : pythonJson(value)}\n</parameter>\n`,
    );
    text += `<tool_call>\n<function=${call.function.name}>\n${parameters.join('')}</function>\n</tool_call>`;
  }
  return `${text}<|im_end|>`;
}

function trimNewlines(text: string): string {
  return text.replace(/^\n+/, '').replace(/\n+$/, '');
}

/** The labelled runs of a window, decoded: one string per trained turn, in order. */
export function supervisedRuns(window: TrainingWindow, decode: (ids: number[]) => string): string[] {
  const runs: string[] = [];
  let run: number[] = [];
  for (const [index, label] of window.labels.entries()) {
    if (label !== -100) {
      if (label !== window.input_ids[index]) throw new Error(`label ${index} differs from its input id`);
      run.push(label);
    } else if (run.length > 0) {
      runs.push(decode(run));
      run = [];
    }
  }
  if (run.length > 0) runs.push(decode(run));
  return runs;
}

/** A thread of one segment whose assistant messages are all the model's recorded responses. */
export function syntheticThread(options: {
  role: Thread['role'];
  messages: ChatMessage[];
  id?: string;
  /** Indices of assistant messages cut by the length limit. */
  truncated?: number[];
  /** Indices of assistant messages the harness wrote itself (not responses). */
  harnessMade?: number[];
}): Thread {
  const responses = options.messages.flatMap((message, messageIndex) =>
    message.role === 'assistant' && !options.harnessMade?.includes(messageIndex)
      ? [
          {
            seq: messageIndex,
            messageIndex,
            finishReason: options.truncated?.includes(messageIndex) ? 'length' : 'stop',
            truncated: options.truncated?.includes(messageIndex) ?? false,
          },
        ]
      : [],
  );
  return Thread.parse({
    schemaVersion: 1,
    threadId: options.id ?? `${options.role}-thread`,
    role: options.role,
    firstSeq: 0,
    calls: responses.length,
    segments: [{ messages: options.messages, tools: [], responses }],
    usage: { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
  });
}

export const system = (text: string): ChatMessage => ({ role: 'system', content: text });
export const user = (text: string): ChatMessage => ({ role: 'user', content: text });
export const tool = (id: string, text: string): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: text,
});
export function assistant(
  content: string,
  reasoning?: string,
  call?: { id: string; name: string; arguments: string },
): ChatMessage {
  return {
    role: 'assistant',
    content,
    ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
    ...(call
      ? {
          tool_calls: [
            {
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: call.arguments },
            },
          ],
        }
      : {}),
  };
}
