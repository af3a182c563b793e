import { SseParser, type SseEvent } from '../model/sse.js';
import { isRecord } from '../model/stream-accumulator.js';
import type { SecretScrubber, StreamedTextScrubber } from './secret-scrubber.js';
import { parseJson } from './sse-recorder.js';

/**
 * The fields of a delta whose pieces a client joins into one text. Other strings of a delta (a tool call's id and
 * type, the role) come whole, each time anew, and are scrubbed where they stand.
 */
const STREAMED_TEXTS: ReadonlySet<string> = new Set([
  'content',
  'reasoning_content',
  'reasoning',
  'refusal',
  'arguments',
]);

/** A step into a streamed delta: an object's key, or the array item with that `index` (a tool call's). */
type Segment = string | { item: number };

interface StreamedField {
  choice: number;
  segments: Segment[];
  scrubber: StreamedTextScrubber;
}

/**
 * Takes the upstream key out of a chat-completions event stream on its way to the client. Each streamed text (a
 * choice's `content`, `reasoning_content`, a tool call's `arguments`…) is one text across its deltas, which a client
 * joins: a key split over two deltas is found, holding back only what could begin it. What is held is handed on in
 * that field's next delta, in its choice's finishing event, or in one last event before `[DONE]`. Every other string
 * of an event is scrubbed where it stands. Events the key is not in are relayed byte for byte.
 *
 * It reads the relayed bytes (whole events, as `SseRecorder` relays them), so that the log keeps what the upstream
 * said while the client gets what it may see.
 */
export class SseSecretScrubber {
  private readonly parser = new SseParser();
  private readonly fields = new Map<string, StreamedField>();
  /** The identity of the stream's chunks, for a last event that hands on held text. */
  private readonly identity: Record<string, unknown> = {};

  constructor(private readonly secret: SecretScrubber) {}

  /** Takes relayed bytes; returns the bytes to send the client now. */
  push(relayed: Buffer): Buffer {
    if (relayed.length === 0) return relayed;
    const events = this.parser.push(relayed).map((event) => this.scrubEvent(event));
    return Buffer.from(events.join(''));
  }

  /** At the end of a stream without `[DONE]`: the text still held, as one last event (or nothing). */
  finish(): Buffer {
    return Buffer.from(this.heldEvent() ?? '');
  }

  private scrubEvent(event: SseEvent): string {
    if (event.data === '[DONE]') return `${this.heldEvent() ?? ''}${event.raw}`;
    const parsed = parseJson(event.data);
    if (!parsed.ok) {
      return this.secret.contains(event.raw) ? this.written(event, this.secret.text(event.data)) : event.raw;
    }
    const scrubbed = this.scrubChunk(parsed.value);
    if (scrubbed === parsed.value && !this.secret.contains(event.raw)) return event.raw;
    return this.written(event, JSON.stringify(scrubbed));
  }

  /** An event written anew around its scrubbed data (comments and unknown fields left out). */
  private written(event: SseEvent, data: string): string {
    const name = event.event === undefined ? '' : `event: ${this.secret.text(event.event)}\n`;
    const lines = data
      .split('\n')
      .map((line) => `data: ${line}`)
      .join('\n');
    return `${name}${lines}\n\n`;
  }

  private scrubChunk(value: unknown): unknown {
    if (!isRecord(value)) return this.secret.value(value);
    for (const key of ['id', 'object', 'created', 'model']) {
      if (value[key] !== undefined) this.identity[key] = this.secret.value(value[key]);
    }
    let changed = false;
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const scrubbedKey = this.secret.text(key);
      const scrubbed =
        key === 'choices' && Array.isArray(item)
          ? this.scrubChoices(item as unknown[])
          : this.secret.value(item);
      if (scrubbedKey !== key || scrubbed !== item) changed = true;
      result[scrubbedKey] = scrubbed;
    }
    return changed ? result : value;
  }

  private scrubChoices(choices: unknown[]): unknown[] {
    let changed = false;
    const result = choices.map((choice, position) => {
      const scrubbed = this.scrubChoice(choice, position);
      if (scrubbed !== choice) changed = true;
      return scrubbed;
    });
    return changed ? result : choices;
  }

  private scrubChoice(choice: unknown, position: number): unknown {
    if (!isRecord(choice)) return this.secret.value(choice);
    const index = typeof choice.index === 'number' ? choice.index : position;
    let changed = false;
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(choice)) {
      const scrubbedKey = this.secret.text(key);
      const scrubbed = key === 'delta' ? this.scrubStreamed(item, index, []) : this.secret.value(item);
      if (scrubbedKey !== key || scrubbed !== item) changed = true;
      result[scrubbedKey] = scrubbed;
    }
    if (typeof choice.finish_reason === 'string') {
      const delta = this.withHeldText(result.delta, index);
      if (delta !== result.delta) {
        result.delta = delta;
        changed = true;
      }
    }
    return changed ? result : choice;
  }

  /** A delta's value, each string of it scrubbed as the next piece of its field. */
  private scrubStreamed(value: unknown, choice: number, segments: Segment[]): unknown {
    if (typeof value === 'string') {
      const name = segments.at(-1);
      if (typeof name !== 'string' || !STREAMED_TEXTS.has(name)) return this.secret.text(value);
      return this.field(choice, segments).scrubber.push(value);
    }
    if (Array.isArray(value)) {
      let changed = false;
      const items = value.map((item: unknown, position) => {
        const itemIndex = isRecord(item) && typeof item.index === 'number' ? item.index : position;
        const scrubbed = this.scrubStreamed(item, choice, [...segments, { item: itemIndex }]);
        if (scrubbed !== item) changed = true;
        return scrubbed;
      });
      return changed ? items : value;
    }
    if (isRecord(value)) {
      let changed = false;
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const scrubbedKey = this.secret.text(key);
        const scrubbed = this.scrubStreamed(item, choice, [...segments, key]);
        if (scrubbedKey !== key || scrubbed !== item) changed = true;
        result[scrubbedKey] = scrubbed;
      }
      return changed ? result : value;
    }
    return value;
  }

  private field(choice: number, segments: Segment[]): StreamedField {
    const key = JSON.stringify([choice, segments]);
    let field = this.fields.get(key);
    if (!field) {
      field = { choice, segments, scrubber: this.secret.streamed() };
      this.fields.set(key, field);
    }
    return field;
  }

  /** A choice's delta with the text its fields still hold appended: the choice is finishing. */
  private withHeldText(delta: unknown, choice: number): unknown {
    const holding = [...this.fields.values()].filter(
      (field) => field.choice === choice && field.scrubber.holding,
    );
    if (holding.length === 0) return delta;
    const result = isRecord(delta) ? (JSON.parse(JSON.stringify(delta)) as Record<string, unknown>) : {};
    for (const field of holding) appendAt(result, field.segments, field.scrubber.flush());
    return result;
  }

  /** One event carrying every text still held, or null when nothing is. */
  private heldEvent(): string | null {
    const choices = new Map<number, Record<string, unknown>>();
    for (const field of this.fields.values()) {
      if (!field.scrubber.holding) continue;
      const delta = choices.get(field.choice) ?? {};
      appendAt(delta, field.segments, field.scrubber.flush());
      choices.set(field.choice, delta);
    }
    if (choices.size === 0) return null;
    const chunk = {
      ...this.identity,
      choices: [...choices].map(([index, delta]) => ({ index, delta, finish_reason: null })),
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}

/** Appends text to the string at a path of a delta, making the objects, arrays and items on the way. */
function appendAt(root: Record<string, unknown>, segments: Segment[], text: string): void {
  let node: unknown = root;
  for (let position = 0; position < segments.length; position++) {
    const segment = segments[position]!;
    const last = position === segments.length - 1;
    const next = segments[position + 1];
    const empty = () => (next !== undefined && typeof next !== 'string' ? [] : {});
    if (typeof segment === 'string') {
      if (!isRecord(node)) return;
      if (last) {
        const existing = node[segment];
        node[segment] = `${typeof existing === 'string' ? existing : ''}${text}`;
        return;
      }
      const child = node[segment];
      const fits = next !== undefined && typeof next !== 'string' ? Array.isArray(child) : isRecord(child);
      if (!fits) node[segment] = empty();
      node = node[segment];
    } else {
      if (!Array.isArray(node)) return;
      if (last) {
        node.push(text);
        return;
      }
      let item: unknown = node.find(
        (candidate: unknown) => isRecord(candidate) && candidate.index === segment.item,
      );
      if (item === undefined) {
        item = { index: segment.item };
        node.push(item);
      }
      node = item;
    }
  }
}
