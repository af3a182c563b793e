import type { IncomingHttpHeaders } from 'node:http';

import { parseJson } from './sse-recorder.js';

/** What stands in for a secret in what the proxy relays and records. */
export const REDACTED = '[REDACTED]';

/**
 * Keys shorter than this are not scrubbed from what the harness receives: they are not secrets (vLLM's customary
 * `EMPTY`), and replacing them would mangle ordinary words of the model's answers.
 */
export const MIN_SCRUBBED_SECRET_LENGTH = 8;

/**
 * Takes one secret (the upstream key the proxy holds) out of whatever the upstream sends back to a client, in each
 * form a reader could turn back into it: as sent, JSON-escaped (`\/`, `\u` escapes are undone by parsing JSON first)
 * and percent-encoded.
 */
export class SecretScrubber {
  /** The secret's textual forms, longest first. */
  readonly forms: readonly string[];

  private constructor(readonly secret: string) {
    const forms = new Set([
      secret,
      JSON.stringify(secret).slice(1, -1),
      JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/'),
      encodeURIComponent(secret),
    ]);
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** A scrubber for the key, or null when there is none worth scrubbing (see `MIN_SCRUBBED_SECRET_LENGTH`). */
  static of(secret: string | undefined): SecretScrubber | null {
    if (secret === undefined || secret.length < MIN_SCRUBBED_SECRET_LENGTH) return null;
    return new SecretScrubber(secret);
  }

  contains(text: string): boolean {
    return this.forms.some((form) => text.includes(form));
  }

  text(text: string): string {
    let scrubbed = text;
    for (const form of this.forms) {
      if (scrubbed.includes(form)) scrubbed = scrubbed.replaceAll(form, REDACTED);
    }
    return scrubbed;
  }

  /** A parsed JSON value with every string (keys included) scrubbed; the same value when nothing changed. */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      let changed = false;
      const items = value.map((item: unknown) => {
        const scrubbed = this.value(item);
        if (scrubbed !== item) changed = true;
        return scrubbed;
      });
      return changed ? items : value;
    }
    if (value !== null && typeof value === 'object') {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const scrubbedKey = this.text(key);
        const scrubbed = this.value(item);
        if (scrubbedKey !== key || scrubbed !== item) changed = true;
        return [scrubbedKey, scrubbed] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  }

  /**
   * A whole body: JSON is parsed, scrubbed and written again (so that escaped forms are found too); anything else is
   * scrubbed as text. The very bytes come back when the secret is not in them.
   */
  body(bytes: Buffer): Buffer {
    const parsed = parseJson(bytes);
    if (parsed.ok) {
      let scrubbed: unknown;
      try {
        scrubbed = this.value(parsed.value);
      } catch {
        // Nested too deep to walk: scrubbed as text below.
        scrubbed = undefined;
      }
      if (scrubbed === parsed.value) return bytes;
      if (scrubbed !== undefined) return Buffer.from(JSON.stringify(scrubbed));
    }
    const text = bytes.toString('utf8');
    return this.contains(text) ? Buffer.from(this.text(text)) : bytes;
  }

  /** Response headers with the secret taken out of every value; a header whose name holds it is dropped. */
  headers(headers: IncomingHttpHeaders): IncomingHttpHeaders {
    const scrubbed: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      if (this.forms.some((form) => name.toLowerCase().includes(form.toLowerCase()))) continue;
      scrubbed[name] = Array.isArray(value) ? value.map((item) => this.text(item)) : this.text(value);
    }
    return scrubbed;
  }

  /** A scrubber for one text that arrives in pieces (a streamed field). */
  streamed(): StreamedTextScrubber {
    return new StreamedTextScrubber(this.forms);
  }
}

/**
 * Scrubs a text that arrives in pieces, such as the deltas of one field of a streamed answer: a secret split over
 * two pieces is still found. It holds back only the end of what it was given that could be the start of a secret,
 * and hands it on with the next piece, or when flushed.
 */
export class StreamedTextScrubber {
  private held = '';

  constructor(private readonly forms: readonly string[]) {}

  /** True while some text is held back. */
  get holding(): boolean {
    return this.held !== '';
  }

  /** Takes the next piece; returns what can be relayed now. */
  push(piece: string): string {
    let rest = this.held + piece;
    let relayed = '';
    for (;;) {
      const found = this.firstForm(rest);
      if (found === null) break;
      relayed += `${rest.slice(0, found.index)}${REDACTED}`;
      rest = rest.slice(found.index + found.form.length);
    }
    const keep = this.possibleStart(rest);
    this.held = rest.slice(rest.length - keep);
    return relayed + rest.slice(0, rest.length - keep);
  }

  /** What is held back: the text ended without completing a secret. */
  flush(): string {
    const held = this.held;
    this.held = '';
    return held;
  }

  private firstForm(text: string): { index: number; form: string } | null {
    let first: { index: number; form: string } | null = null;
    for (const form of this.forms) {
      const index = text.indexOf(form);
      if (index !== -1 && (first === null || index < first.index)) first = { index, form };
    }
    return first;
  }

  /** The length of the longest end of `text` that begins some form of the secret. */
  private possibleStart(text: string): number {
    let longest = 0;
    for (const form of this.forms) {
      for (let length = Math.min(text.length, form.length - 1); length > longest; length--) {
        if (text.endsWith(form.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
