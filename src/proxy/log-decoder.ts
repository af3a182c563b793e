import { UserError } from '../errors.js';
import { isRecord } from '../model/stream-accumulator.js';
import type { AssistantMessage } from '../model/types.js';
import type { ChatDelta, ProxyLogRow, StoredProxyLogRow } from './log-row.js';

/** What later rows of the same writer may take from a row: its whole messages, its answer. */
interface Remembered {
  messages?: readonly unknown[];
  answer?: AssistantMessage;
}

/** A row two lines of one writer both claim: a later row that names it cannot know which one it meant. */
const AMBIGUOUS = Symbol('ambiguous');

/**
 * Turns the stored rows of one proxy log, fed in file order, back into rows with their whole request (see
 * log-encoder.ts for what a schemaVersion 2 row leaves out). It keeps each row's messages and answer (by reference:
 * the rows it returns share message objects, so memory grows with what the log stores, not with what it rebuilds)
 * and each tool list, by hash. A row that names an earlier row or tool list the log does not hold, or holds twice,
 * is an error naming the file and the line: a request is rebuilt exactly or not at all.
 */
export class ProxyLogDecoder {
  /** What each schemaVersion 2 row left for later ones, by `writer/seq`. */
  private readonly rows = new Map<string, Remembered | typeof AMBIGUOUS>();
  private readonly toolLists = new Map<string, readonly unknown[]>();

  constructor(private readonly file: string) {}

  /** The row with its whole request; throws (naming the file and `line`) when it cannot be rebuilt exactly. */
  decode(stored: StoredProxyLogRow, line: number): ProxyLogRow {
    if (stored.schemaVersion === 1) return stored;
    const { schemaVersion: _version, writer, chat, request, ...fields } = stored;
    const remembered: Remembered = {};
    if (fields.response?.kind === 'completion') remembered.answer = fields.response.completion.message;
    const key = `${writer}/${fields.seq}`;
    if (chat === undefined) {
      this.remember(key, remembered);
      return { schemaVersion: 1, ...fields, request };
    }
    const messages = this.messagesOf(writer, chat, line);
    remembered.messages = messages;
    this.remember(key, remembered);
    const tools = chat.tools === undefined ? undefined : this.toolsOf(chat.tools, line);
    if (!isRecord(request) || !('messages' in request) || (tools !== undefined && !('tools' in request))) {
      this.fail(line, 'has `chat` but its `request` is not a body with `messages` (and `tools`) in place');
    }
    // Rebuilt key by key, in the order the body had them; `fromEntries` defines even a key named `__proto__`.
    const body = Object.fromEntries(
      Object.entries(request).map(([name, value]) => {
        if (name === 'messages') return [name, messages];
        if (name === 'tools' && tools !== undefined) return [name, tools];
        return [name, value];
      }),
    );
    return { schemaVersion: 1, ...fields, request: body };
  }

  private remember(key: string, remembered: Remembered): void {
    this.rows.set(key, this.rows.has(key) ? AMBIGUOUS : remembered);
  }

  /** The row `seq` of `writer`, which an earlier line must hold (once). */
  private earlier(writer: string, seq: number, line: number, use: string): Remembered {
    const row = this.rows.get(`${writer}/${seq}`);
    if (row === undefined)
      this.fail(line, `${use} row ${seq} of writer ${writer}, which no earlier line holds`);
    if (row === AMBIGUOUS)
      this.fail(line, `${use} row ${seq} of writer ${writer}, which two earlier lines claim`);
    return row;
  }

  private messagesOf(writer: string, chat: ChatDelta, line: number): unknown[] {
    const added = [...chat.added];
    for (const { at, seq, keys } of chat.answers ?? []) {
      const answer = this.earlier(writer, seq, line, 'repeats the answer of').answer;
      if (added[at] !== null || answer === undefined || !sameKeys(answer, keys)) {
        this.fail(
          line,
          `repeats the answer of row ${seq} of writer ${writer} as message ${at}, which does not fit`,
        );
      }
      added[at] = Object.fromEntries(keys.map((name) => [name, answer[name]]));
    }
    if (chat.base === undefined) return added;
    const { seq, shared } = chat.base;
    const base = this.earlier(writer, seq, line, 'opens with the messages of').messages;
    if (base === undefined || base.length < shared) {
      this.fail(
        line,
        `opens with ${shared} messages of row ${seq} of writer ${writer}, which has ${base?.length ?? 'none'}`,
      );
    }
    return [...base.slice(0, shared), ...added];
  }

  private toolsOf(tools: NonNullable<ChatDelta['tools']>, line: number): readonly unknown[] {
    if (tools.list !== undefined) {
      this.toolLists.set(tools.hash, tools.list);
      return tools.list;
    }
    const list = this.toolLists.get(tools.hash);
    if (list === undefined) this.fail(line, `names the tool list ${tools.hash}, which no earlier line holds`);
    return list;
  }

  private fail(line: number, problem: string): never {
    throw new UserError(
      `${this.file}: line ${line} ${problem}: the log is damaged (a row lost or cut out), and this request cannot ` +
        'be rebuilt exactly (`mass log export` still writes the rows before it)',
    );
  }
}

/** Whether `keys` are the message's own keys, each once, in some order. */
function sameKeys(message: Record<string, unknown>, keys: string[]): boolean {
  const own = Object.keys(message).filter((name) => message[name] !== undefined);
  return (
    own.length === keys.length &&
    new Set(keys).size === keys.length &&
    keys.every((name) => Object.hasOwn(message, name))
  );
}
