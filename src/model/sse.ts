/** One server-sent event: its `data` lines joined, and its exact text (for relaying it unchanged). */
export interface SseEvent {
  data: string;
  event?: string;
  raw: string;
}

/**
 * Incremental parser of a `text/event-stream` body. Feed it bytes as they arrive; it returns every event
 * completed so far. Tolerates `\r\n` line ends and UTF-8 characters split across network chunks.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';

  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const events: SseEvent[] = [];
    for (;;) {
      const boundary = findEventBoundary(this.buffer);
      if (!boundary) break;
      const raw = this.buffer.slice(0, boundary.end);
      this.buffer = this.buffer.slice(boundary.end);
      const event = parseEvent(raw.slice(0, boundary.start), raw);
      if (event) events.push(event);
    }
    return events;
  }

  /** Text received after the last complete event (a stream that ended mid-event leaves some). */
  get pending(): string {
    return this.buffer;
  }
}

function findEventBoundary(text: string): { start: number; end: number } | null {
  const match = /\r?\n\r?\n/.exec(text);
  if (!match) return null;
  return { start: match.index, end: match.index + match[0].length };
}

function parseEvent(block: string, raw: string): SseEvent | null {
  const dataLines: string[] = [];
  let event: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') dataLines.push(value);
    else if (field === 'event') event = value;
  }
  if (dataLines.length === 0 && event === undefined) return null;
  return event === undefined
    ? { data: dataLines.join('\n'), raw }
    : { data: dataLines.join('\n'), event, raw };
}
