import { SseParser } from '../model/sse.js';
import { StreamAccumulator, isRecord } from '../model/stream-accumulator.js';
import type { RecordedResponse } from './log-row.js';

export type ParsedJson = { ok: true; value: unknown } | { ok: false };

export function parseJson(input: Buffer | string): ParsedJson {
  if (input.length === 0) return { ok: false };
  try {
    return {
      ok: true,
      value: JSON.parse(typeof input === 'string' ? input : input.toString('utf8')) as unknown,
    };
  } catch {
    return { ok: false };
  }
}

/**
 * Relays an event stream event by event as it arrives, and reassembles the completion it carries.
 *
 * A stream cut mid-way can be resumed from a replay of the same request: `replay()` starts over on the new stream,
 * whose first events must say what the events already relayed said (the same deltas and finish reasons; ids,
 * timestamps and usage figures aside). Those are skipped and the rest relayed, under the first stream's id, so the
 * client reads one whole answer the model did give. A replay that says anything else `diverged`: it cannot be
 * joined to what the client already has.
 */
export class SseRecorder {
  private parser = new SseParser();
  private readonly accumulator = new StreamAccumulator();
  private sawDone = false;
  private malformedEvent: string | null = null;
  /** What each event taken from the stream so far said, relayed or hidden. */
  private readonly taken: string[] = [];
  private firstId: string | null = null;
  /** On a replay: how many of the events taken before have been seen again, and how many there are to see. */
  private replayed: number | null = null;
  private toSeeAgain = 0;
  private divergedAt: number | null = null;

  constructor(private readonly hideUsageChunk: boolean) {}

  /** Events taken from the upstream (relayed or hidden) so far. */
  get events(): number {
    return this.taken.length;
  }

  /** Set when a replay said something else than what was relayed: the event number where it differed. */
  get diverged(): number | null {
    return this.divergedAt;
  }

  /** Starts reading a replay of the call, after the stream so far was cut. */
  replay(): void {
    this.parser = new SseParser();
    this.replayed = 0;
    this.toSeeAgain = this.taken.length;
  }

  /** Takes upstream bytes; returns the bytes to relay to the client now (whole events only). */
  push(chunk: Buffer): Buffer {
    const relayed: string[] = [];
    for (const event of this.parser.push(chunk)) {
      if (this.divergedAt !== null) break;
      const parsed = event.data === '[DONE]' ? null : parseJson(event.data);
      const said = saying(event.data, parsed);
      if (this.replayed !== null && this.replayed < this.toSeeAgain) {
        if (said !== this.taken[this.replayed]) {
          this.divergedAt = this.replayed;
          break;
        }
        this.replayed++;
        continue;
      }
      this.taken.push(said);
      if (
        this.firstId === null &&
        parsed?.ok &&
        isRecord(parsed.value) &&
        typeof parsed.value.id === 'string'
      ) {
        this.firstId = parsed.value.id;
      }
      const isUsageChunk = this.observe(event.data, parsed);
      if (isUsageChunk && this.hideUsageChunk) continue;
      relayed.push(this.replayed === null ? event.raw : this.underFirstId(event.raw, parsed));
    }
    return Buffer.from(relayed.join(''));
  }

  /** A replayed event under the id the client was given first. */
  private underFirstId(raw: string, parsed: ParsedJson | null): string {
    if (!parsed?.ok || !isRecord(parsed.value) || this.firstId === null) return raw;
    if (parsed.value.id === this.firstId || typeof parsed.value.id !== 'string') return raw;
    return `data: ${JSON.stringify({ ...parsed.value, id: this.firstId })}\n\n`;
  }

  /** Records one event; returns true when it is a usage-only chunk. */
  private observe(data: string, parsed: ParsedJson | null): boolean {
    if (parsed === null) {
      this.sawDone = true;
      return false;
    }
    if (!parsed.ok) {
      this.malformedEvent ??= data.slice(0, 200);
      return false;
    }
    this.accumulator.push(parsed.value);
    const value = parsed.value;
    return (
      isRecord(value) && Array.isArray(value.choices) && value.choices.length === 0 && isRecord(value.usage)
    );
  }

  finish(): { response: RecordedResponse | null; error: string | null } {
    const response: RecordedResponse = { kind: 'completion', completion: this.accumulator.result() };
    if (this.malformedEvent !== null)
      return { response, error: `malformed stream event: ${this.malformedEvent}` };
    const trailing = this.parser.pending.trim();
    if (!this.sawDone) {
      return {
        response,
        error: `stream ended before [DONE]${trailing ? ` with an incomplete event: ${trailing.slice(0, 200)}` : ''}`,
      };
    }
    return { response, error: null };
  }
}

/**
 * What an event says, for comparing a replay with the stream it replaces: each choice's delta (tool-call ids left
 * out: servers draw them afresh) and finish reason, and whether usage came. Anything unparsed is compared as sent.
 */
function saying(data: string, parsed: ParsedJson | null): string {
  if (parsed === null || !parsed.ok || !isRecord(parsed.value)) return data;
  const { choices, usage } = parsed.value;
  const said = Array.isArray(choices)
    ? choices.map((choice: unknown) => {
        if (!isRecord(choice)) return choice;
        const delta = isRecord(choice.delta) ? { ...choice.delta } : choice.delta;
        if (isRecord(delta) && Array.isArray(delta.tool_calls)) {
          delta.tool_calls = delta.tool_calls.map((call: unknown) => {
            if (!isRecord(call)) return call;
            const { id: _id, ...rest } = call;
            return rest;
          });
        }
        return { index: choice.index, delta, finish_reason: choice.finish_reason ?? null };
      })
    : null;
  return JSON.stringify({ choices: said, usage: isRecord(usage) });
}
