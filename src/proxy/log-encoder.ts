import { createHash, randomBytes } from 'node:crypto';

import { isRecord } from '../model/stream-accumulator.js';
import { AssistantMessage } from '../model/types.js';
import { redact } from './log-redaction.js';
import type { ProxyLogRow } from './log-row.js';

/** A row's fields but its request, as the writer knows them when the request ends. */
export type RowFields = Omit<ProxyLogRow, 'schemaVersion' | 'request'>;

/** A request body as it came: JSON (with the bytes it was parsed from, to store as sent), or anything else. */
export type RequestBody =
  { json: true; value: unknown; bytes?: Buffer } | { json: false; text: string | null };

/** A row as one JSON line, and what lets later rows refer to it. */
export interface EncodedRow {
  line: string;
  /** Call once the line is written (and only then): later rows may then open with this one's messages. */
  remember(): void;
}

/**
 * Writes proxy log rows (schemaVersion 2) that store each thing once. The harness sends a thread's whole
 * conversation on every call, so rows holding whole bodies grow with the square of a conversation's length (the
 * paper's 150 calls per thread would store each message some 75 times). A chat request's row stores instead:
 *
 * - its messages past the longest prefix it shares with a row this writer wrote earlier, naming that row (`seq`)
 *   and the prefix's length: one reference per row, since a thread's next request is its last one plus what the
 *   turn added. A request that does not extend an earlier one (a compacted history, a rewritten system prompt, a new
 *   thread) shares what it does, down to nothing, and stores the rest. Keeping a hash per message instead, to reuse
 *   messages anywhere, would cost a reference per message per row, which grows with the square again;
 * - an added message that repeats an earlier row's answer (the model's turn, which the harness sends back in its next
 *   request) as a reference to that row and the message's key order: otherwise each turn would be stored twice;
 * - its `tools` by hash, the list itself in the first row that uses it: the list is the same on every call of a
 *   thread, and is tens of kilobytes;
 * - everything else of the body as it is, `messages` and `tools` left `null` where the body had them, so that the
 *   reader (log-decoder.ts) rebuilds the body with its keys in their order: `JSON.stringify` of the rebuilt body is
 *   that of the body sent (after redaction, as before).
 *
 * Other rows (bodies that are not JSON, JSON that is not a chat request, refused requests) store their body as
 * earlier versions did. To find shared prefixes the encoder keeps, not the bodies, but one hash per distinct prefix
 * (each message's JSON chained onto the hash of those before it) with the last row that had it, one hash per answer
 * (of the message as the reader will have it, its keys sorted), and the hashes of tool lists written. Hashes are
 * taken of each message as stored: its JSON with its keys in their order (not canonical JSON, or a message sent with
 * its keys in another order would be rebuilt in the earlier one's), redacted with the row's secrets (two rows share a
 * message only when they would store it alike, so a rebuilt request is what a whole row would have held). The line is
 * then redacted whole, as before, which catches even a secret written across two messages.
 */
export class ProxyLogEncoder {
  /** Names this writer's rows: a log appended to by several proxies numbers rows from 0 again for each. */
  readonly writer = randomBytes(6).toString('base64url');
  /** The hash of each message prefix written, with the `seq` of the last row that opened with it. */
  private readonly prefixes = new Map<string, number>();
  private readonly toolLists = new Set<string>();
  /** The hash of each answer written (see `answerHash`), with its row's `seq`. */
  private readonly answers = new Map<string, number>();

  encode(fields: RowFields, body: RequestBody, secrets: string[]): EncodedRow {
    const head = JSON.stringify({ schemaVersion: 2, writer: this.writer, ...fields }).slice(0, -1);
    const answer = this.answerOf(fields, secrets);
    if (body.json && (fields.refusal ?? null) === null && isRecord(body.value)) {
      const messages = body.value.messages;
      if (Array.isArray(messages))
        return this.encodeChat(head, fields.seq, body.value, messages, secrets, answer);
    }
    return { line: redact(`${head},"request":${storedAsIs(body)}}`, secrets), remember: answer };
  }

  /**
   * What remembers the row's answer: the hash of its message as a reader of the log will have it (redacted, then
   * validated as the row schema does, which may leave fields out or reorder them).
   */
  private answerOf(fields: RowFields, secrets: string[]): () => void {
    if (fields.response?.kind !== 'completion') return () => {};
    const text = redact(JSON.stringify(fields.response.completion.message), secrets);
    const parsed = AssistantMessage.safeParse(parsedOrUndefined(text));
    if (!parsed.success) return () => {};
    const hash = answerHash(parsed.data);
    return () => this.answers.set(hash, fields.seq);
  }

  private encodeChat(
    head: string,
    seq: number,
    body: Record<string, unknown>,
    messages: unknown[],
    secrets: string[],
    rememberAnswer: () => void,
  ): EncodedRow {
    const texts = messages.map((message) => redact(JSON.stringify(message), secrets));
    const hashes = prefixHashes(texts);
    let shared = 0;
    while (shared < hashes.length && this.prefixes.has(hashes[shared]!)) shared++;
    const chat: string[] = [];
    if (shared > 0)
      chat.push(`"base":${JSON.stringify({ seq: this.prefixes.get(hashes[shared - 1]!), shared })}`);
    const added = texts.slice(shared);
    const answers = added.flatMap((text, at) => {
      const answer = this.repeatedAnswer(messages[shared + at], text);
      if (answer === undefined) return [];
      added[at] = 'null';
      return [{ at, ...answer }];
    });
    chat.push(`"added":[${added.join(',')}]`);
    if (answers.length > 0) chat.push(`"answers":${JSON.stringify(answers)}`);

    const tools = Array.isArray(body.tools) ? redact(JSON.stringify(body.tools), secrets) : undefined;
    const toolsHash = tools === undefined ? undefined : createHash('sha256').update(tools).digest('hex');
    if (toolsHash !== undefined) {
      const list = this.toolLists.has(toolsHash) ? '' : `,"list":${tools}`;
      chat.push(`"tools":{"hash":"${toolsHash}"${list}}`);
    }
    const request =
      toolsHash === undefined ? { ...body, messages: null } : { ...body, messages: null, tools: null };
    return {
      line: redact(`${head},"request":${JSON.stringify(request)},"chat":{${chat.join(',')}}}`, secrets),
      remember: () => {
        for (const hash of hashes) this.prefixes.set(hash, seq);
        if (toolsHash !== undefined) this.toolLists.add(toolsHash);
        rememberAnswer();
      },
    };
  }

  /**
   * The earlier answer a message repeats, with the message's key order: when its keys, sorted, and their values
   * are those of that answer as the reader has it, the reader rebuilds the message exactly by taking the answer's
   * values in this order. `text` is the message as it would be stored.
   */
  private repeatedAnswer(message: unknown, text: string): { seq: number; keys: string[] } | undefined {
    if (!isRecord(message) || message.role !== 'assistant' || this.answers.size === 0) return undefined;
    const stored = parsedOrUndefined(text);
    if (!isRecord(stored) || JSON.stringify(stored) !== text) return undefined;
    const seq = this.answers.get(answerHash(stored));
    return seq === undefined ? undefined : { seq, keys: Object.keys(stored) };
  }
}

/** JSON text parsed; undefined when a secret's redaction left it no longer JSON. */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A message's hash whatever the order of its own keys (those of the values inside it count). */
function answerHash(message: Record<string, unknown>): string {
  const sorted = Object.fromEntries(Object.entries(message).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64');
}

/** The hash of each prefix of the messages: the first message's, then each next one's chained onto it. */
function prefixHashes(texts: string[]): string[] {
  let previous = Buffer.alloc(0);
  return texts.map((text) => {
    previous = createHash('sha256').update(previous).update(text).digest();
    return previous.toString('base64');
  });
}

/**
 * A body stored as it is. A JSON body is spliced in as the client sent it when that keeps the line one line:
 * serialising it again would double the cost.
 */
function storedAsIs(body: RequestBody): string {
  if (!body.json) return JSON.stringify(body.text);
  const text = body.bytes?.toString('utf8');
  return text === undefined || /[\r\n]/.test(text) ? JSON.stringify(body.value) : text;
}
