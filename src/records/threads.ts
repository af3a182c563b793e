import { createHash } from 'node:crypto';

import { z } from 'zod';

import { firstUserMessage, systemPromptOf, threadRoleOf, type ThreadRole } from '../harness/qwen-code.js';
import type { AssistantMessage } from '../model/types.js';
import { ChatMessage, ToolDefinition } from '../model/types.js';
import type { ProxyLogRow } from '../proxy/log-row.js';
import { continuesConversation } from './message-equivalence.js';
import { requestProvenance, type ProvenanceOptions, type RequestProvenance } from './request-provenance.js';

/** Where an assistant message of a segment came from: the recorded response of request `seq`. */
export const SegmentResponse = z.object({
  seq: z.number().int(),
  /** Index of the assistant message in the segment's `messages`. */
  messageIndex: z.number().int(),
  finishReason: z.string().nullable(),
  /** Cut by the output limit (`finish_reason: "length"`): not a complete answer. */
  truncated: z.boolean(),
});

/**
 * One uninterrupted conversation: each request continued the previous one. Every assistant message is the model's
 * own recorded response, not the harness's echo of it; the last one is the final response.
 */
export const Segment = z.object({
  messages: z.array(ChatMessage),
  tools: z.array(ToolDefinition),
  responses: z.array(SegmentResponse),
});
export type Segment = z.infer<typeof Segment>;

/**
 * A conversation of the episode: all requests with the same system prompt and first user message. Version 1 did not
 * tell forged conversations apart (`forged` is absent there).
 */
export const Thread = z.object({
  schemaVersion: z.union([z.literal(1), z.literal(2)]),
  threadId: z.string(),
  role: z.enum(['orchestrator', 'subagent', 'auxiliary']),
  /**
   * Its requests were not built by the harness but posted to the proxy by agent code (see `requestProvenance`):
   * kept for the record, never counted, shown to a judge or trained on.
   */
  forged: z.boolean().optional(),
  /** The first request's sequence number: threads are listed in the order they started. */
  firstSeq: z.number().int(),
  calls: z.number().int(),
  segments: z.array(Segment),
  usage: z.object({ promptTokens: z.number(), completionTokens: z.number(), reasoningTokens: z.number() }),
});
export type Thread = z.infer<typeof Thread>;

/** One successful chat completion of the episode: the request, the model's response and who built the request. */
export interface Exchange {
  seq: number;
  provenance: RequestProvenance;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  response: AssistantMessage;
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number; reasoningTokens: number };
}

const CompletionRequest = z.looseObject({
  messages: z.array(ChatMessage),
  tools: z.array(ToolDefinition).optional(),
});

/** Successful chat completions of a proxy log; failed requests carry no response and are left out. */
function exchangesOf(rows: ProxyLogRow[], provenance: Map<number, RequestProvenance>): Exchange[] {
  const exchanges: Exchange[] = [];
  for (const row of rows) {
    if (row.status !== 200 || row.error !== null || row.response?.kind !== 'completion') continue;
    const request = CompletionRequest.safeParse(row.request);
    const judged = provenance.get(row.seq);
    if (!request.success || !judged) continue;
    const { completion } = row.response;
    exchanges.push({
      seq: row.seq,
      provenance: judged,
      messages: request.data.messages,
      tools: request.data.tools ?? [],
      response: completion.message,
      finishReason: completion.finish_reason,
      usage: {
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0,
        reasoningTokens: completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0,
      },
    });
  }
  return exchanges.sort((a, b) => a.seq - b.seq);
}

/** Forged requests form threads of their own: never a segment of one of the harness's conversations. */
function threadKey(messages: ChatMessage[], forged: boolean): string {
  const first = firstUserMessage(messages);
  const opening = [systemPromptOf(messages), first?.content ?? null];
  return createHash('sha256')
    .update(JSON.stringify(forged ? ['forged', ...opening] : opening))
    .digest('hex')
    .slice(0, 16);
}

export interface EpisodeConversations {
  threads: Thread[];
  /** Every chat request with its provenance, failed ones included, by sequence number. */
  provenance: Map<number, RequestProvenance>;
  /** The successful ones, in the order the proxy numbered them. */
  exchanges: Exchange[];
}

/**
 * The conversations of an episode from its proxy log: requests grouped by (system prompt, first user message) into
 * threads, each split into segments wherever a request does not continue the one before, each classified as the
 * orchestrator's, a subagent's or the harness's own (auxiliary), and marked forged when agent code, not the harness,
 * posted its requests.
 */
export function buildThreads(rows: ProxyLogRow[], options: ProvenanceOptions = {}): Thread[] {
  return episodeConversations(rows, options).threads;
}

/** `buildThreads`, with what the threads were built from. */
export function episodeConversations(
  rows: ProxyLogRow[],
  options: ProvenanceOptions = {},
): EpisodeConversations {
  const provenance = requestProvenance(rows, options);
  const exchanges = exchangesOf(rows, provenance);
  const groups = new Map<string, Exchange[]>();
  for (const exchange of exchanges) {
    const key = threadKey(exchange.messages, exchange.provenance.forgery !== null);
    const group = groups.get(key);
    if (group) group.push(exchange);
    else groups.set(key, [exchange]);
  }
  const threads = [...groups.entries()]
    .map(([threadId, grouped]) => buildThread(threadId, grouped))
    .sort((a, b) => a.firstSeq - b.firstSeq);
  return { threads, provenance, exchanges };
}

function buildThread(threadId: string, exchanges: Exchange[]): Thread {
  const segments: Exchange[][] = [];
  for (const exchange of exchanges) {
    const current = segments.at(-1);
    const previous = current?.at(-1);
    if (
      current &&
      previous &&
      continuesConversation(previous.messages, previous.response, exchange.messages)
    ) {
      current.push(exchange);
    } else segments.push([exchange]);
  }
  const role: ThreadRole = threadRoleOf(systemPromptOf(exchanges[0]!.messages));
  return {
    schemaVersion: 2,
    threadId,
    role,
    forged: exchanges[0]!.provenance.forgery !== null,
    firstSeq: exchanges[0]!.seq,
    calls: exchanges.length,
    segments: segments.map(segmentOf),
    usage: exchanges.reduce(
      (sum, exchange) => ({
        promptTokens: sum.promptTokens + exchange.usage.promptTokens,
        completionTokens: sum.completionTokens + exchange.usage.completionTokens,
        reasoningTokens: sum.reasoningTokens + exchange.usage.reasoningTokens,
      }),
      { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
    ),
  };
}

/** The last request's conversation with every echoed assistant turn replaced by the recorded response, plus the final one. */
function segmentOf(exchanges: Exchange[]): Segment {
  const last = exchanges.at(-1)!;
  const messages: ChatMessage[] = [...last.messages, last.response];
  const responses = exchanges.map((exchange) => {
    const messageIndex = exchange.messages.length;
    messages[messageIndex] = exchange.response;
    return {
      seq: exchange.seq,
      messageIndex,
      finishReason: exchange.finishReason,
      truncated: exchange.finishReason === 'length',
    };
  });
  return { messages, tools: last.tools, responses };
}
