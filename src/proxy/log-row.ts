import { z } from 'zod';

import { AssistantMessage, WireUsage } from '../model/types.js';
import { eachStrictJsonLine } from '../store/json-lines.js';
import { ProxyLogDecoder } from './log-decoder.js';

const ReassembledCompletion = z.object({
  id: z.string().nullable(),
  model: z.string().nullable(),
  message: AssistantMessage,
  finish_reason: z.string().nullable(),
  usage: WireUsage.nullable(),
  other_choices: z
    .array(z.object({ index: z.number(), message: AssistantMessage, finish_reason: z.string().nullable() }))
    .optional(),
});

/** What the upstream answered: a chat completion (streamed or not, reassembled), other JSON, or text. */
export const RecordedResponse = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('completion'), completion: ReassembledCompletion }),
  z.object({ kind: z.literal('json'), body: z.unknown() }),
  z.object({ kind: z.literal('text'), text: z.string(), truncated: z.boolean() }),
]);
export type RecordedResponse = z.infer<typeof RecordedResponse>;

/** One attempt at the upstream for a call: the proxy retries failures that happen before the client got a byte. */
export const UpstreamAttempt = z.object({
  /** The upstream's status; null when no response head came (refused, reset, timed out). */
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  /** When the attempt started, from the start of the call. */
  startedAfterMs: z.number(),
  durationMs: z.number(),
  /** The wait before the next attempt; null for the last one. */
  delayMs: z.number().nullable(),
  /** The replica it went to, when the model has replicas (`roles.<role>.replicas`); absent otherwise. */
  replica: z.string().optional(),
});
export type UpstreamAttempt = z.infer<typeof UpstreamAttempt>;

/**
 * Why the proxy answered a request itself, forwarding nothing upstream: not the model API (`MODEL_ROUTES`), a
 * request it could not read or check (bad HTTP, a chat body that is not a JSON object…), a body over the bound, or
 * the output budget spent.
 */
export const ProxyRefusal = z.enum(['not_forwarded', 'malformed', 'too_large', 'output_budget']);
export type ProxyRefusal = z.infer<typeof ProxyRefusal>;

/**
 * One row of a proxy log (`requests.jsonl`) with its whole request: one request, written once when it ends. Never
 * holds headers. Logs before schemaVersion 2 stored these rows as they are; `readProxyLog` gives every row so,
 * whichever version stored it, and `mass log export` writes them (see `StoredProxyLogRow`).
 */
export const ProxyLogRow = z.object({
  schemaVersion: z.literal(1),
  seq: z.number().int().nonnegative(),
  startedAt: z.string(),
  endedAt: z.string(),
  durationMs: z.number(),
  method: z.string(),
  path: z.string(),
  /** The status the client received; null when no response head was sent (connection dropped or client gone). */
  status: z.number().int().nullable(),
  model: z.string().nullable(),
  stream: z.boolean(),
  /** The request body as the client sent it: parsed JSON, the raw text when not JSON, null when empty. */
  request: z.unknown(),
  requestIsJson: z.boolean(),
  response: RecordedResponse.nullable(),
  bytes: z.object({ request: z.number().int(), response: z.number().int() }),
  clientDisconnected: z.boolean(),
  /** The proxy asked the upstream for stream usage the client did not request, and kept it from the client. */
  usageInjected: z.boolean(),
  error: z.string().nullable(),
  /** Every attempt at the upstream, in order (absent in logs from before retries: one attempt). */
  attempts: z.array(UpstreamAttempt).optional(),
  /**
   * Set when the proxy refused the request and nothing reached the upstream (`error` says why); null when it was
   * forwarded; absent in logs from before refusals were recorded. A row the HTTP parser could not read has an empty
   * method and path.
   */
  refusal: ProxyRefusal.nullable().optional(),
  /**
   * The replica that answered (its address), when the model has replicas (`roles.<role>.replicas`): the last
   * attempt's. Absent for a model served at one address, and in logs from before replicas.
   */
  replica: z.string().optional(),
});
export type ProxyLogRow = z.infer<typeof ProxyLogRow>;

/**
 * What a schemaVersion 2 chat row stores of its request's `messages` and `tools` (see log-encoder.ts for why):
 * the messages past those it shares with an earlier row of the same writer, those that repeat an earlier row's
 * answer by reference, and the tool list by its hash.
 */
export const ChatDelta = z.object({
  /** The earlier row (same `writer`, this `seq`) whose first `shared` messages open this request's. */
  base: z.object({ seq: z.number().int().nonnegative(), shared: z.number().int().positive() }).optional(),
  /** The request's messages after the shared ones (all of them without a base). */
  added: z.array(z.unknown()),
  /**
   * Messages of `added` left `null` because they repeat an earlier row's answer (same writer): the model's turn,
   * which the harness sends back in its next request. `keys` is the message's own key order.
   */
  answers: z
    .array(
      z.object({
        at: z.number().int().nonnegative(),
        seq: z.number().int().nonnegative(),
        keys: z.array(z.string()),
      }),
    )
    .optional(),
  /** The request's `tools`: its hash, and the list itself in the first row of the log that uses it. */
  tools: z.object({ hash: z.string(), list: z.array(z.unknown()).optional() }).optional(),
});
export type ChatDelta = z.infer<typeof ChatDelta>;

/**
 * A row as schemaVersion 2 stores it: the same fields, the writer that wrote it (a random id per proxy: a log
 * appended to by several proxies numbers its rows from 0 again for each), and for a chat request `chat`, with
 * `messages` (and `tools` when `chat.tools` is there) left `null` in `request`, where the body had them.
 */
export const ProxyLogRowV2 = ProxyLogRow.extend({
  schemaVersion: z.literal(2),
  writer: z.string().min(1),
  chat: ChatDelta.optional(),
});
export type ProxyLogRowV2 = z.infer<typeof ProxyLogRowV2>;

/** A line of a proxy log as stored: a whole row (schemaVersion 1), or a row that may refer to earlier ones (2). */
export const StoredProxyLogRow = z.discriminatedUnion('schemaVersion', [ProxyLogRow, ProxyLogRowV2]);
export type StoredProxyLogRow = z.infer<typeof StoredProxyLogRow>;

/** True when the proxy made more than one attempt at the upstream for this call. */
export function wasRetried(row: Pick<ProxyLogRow, 'attempts'>): boolean {
  return (row.attempts?.length ?? 1) > 1;
}

/**
 * The longest row read. The proxy bounds a request body at 32 MiB and an answer at 64 MiB by default; a row holds
 * both, re-serialised, so escapes can make it several times longer, and V8 cannot hold a string of 512 MiB.
 */
const MAX_ROW_BYTES = 448 * 1024 ** 2;

/**
 * Every row of a proxy log file, validated, each with its whole request whatever the schema version that stored it,
 * read row by row (the whole log never becomes one string: a team's long conversations, or agents posting large
 * requests, could make it longer than any string V8 can hold); a missing file has none. A bad row is named by file
 * and line, and so is a row whose earlier row is missing; a last row the proxy did not finish (killed mid-write) is
 * left out. Rows may share message objects: treat them as read-only.
 */
export async function readProxyLog(file: string): Promise<ProxyLogRow[]> {
  const rows: ProxyLogRow[] = [];
  await eachProxyLogRow(file, (row) => void rows.push(row));
  return rows;
}

/** `readProxyLog` streamed: each row, its request whole, handed to `onRow` as it is read (`mass log export`). */
export function eachProxyLogRow(
  file: string,
  onRow: (row: ProxyLogRow, line: number) => void,
): Promise<void> {
  const decoder = new ProxyLogDecoder(file);
  return eachStrictJsonLine(
    file,
    StoredProxyLogRow,
    'a proxy log row',
    { maxLineBytes: MAX_ROW_BYTES, missing: 'empty', unfinishedLastLine: 'skip' },
    (stored, line) => onRow(decoder.decode(stored, line), line),
  );
}
