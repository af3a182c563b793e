import type { TokenCounter } from '../model/token-counter.js';
import { formatCount } from './format.js';

/** A piece of evidence cut to a token budget. */
export interface Excerpt {
  text: string;
  tokens: number;
  /** True when something was left out (and a marker says how much). */
  truncated: boolean;
}

/** The text of a file as read: all of it, or only its two ends when it is too large to read whole. */
export type FileText =
  { kind: 'whole'; text: string } | { kind: 'ends'; head: string; tail: string; totalBytes: number };

/** Below this many tokens an excerpt is only its marker: a few lines out of context mislead more than they help. */
const SMALLEST_USEFUL_EXCERPT = 32;
const MAX_FIT_ROUNDS = 8;

export const omittedTokensMarker = (tokens: number): string => `[… ${formatCount(tokens)} tokens omitted …]`;
const omittedBytesMarker = (bytes: number): string => `[… ${formatCount(bytes)} bytes omitted …]`;

/**
 * Cuts text to at most `maxTokens` tokens: the head and the tail are kept (`headShare` of the room goes to the head),
 * the middle becomes a marker such as `[… 1,234 tokens omitted …]`. Cuts fall on line breaks where one is near.
 * Never fails: with no room at all the excerpt is the marker alone.
 */
export function shrinkToTokens(
  counter: TokenCounter,
  text: string,
  maxTokens: number,
  headShare = 0.6,
): Excerpt {
  const ids = counter.encode(text);
  if (ids.length <= maxTokens) return { text, tokens: ids.length, truncated: false };
  const allOmitted = omittedTokensMarker(ids.length);
  if (maxTokens < SMALLEST_USEFUL_EXCERPT) return markerOnly(counter, allOmitted);

  let room = maxTokens - counter.count(allOmitted) - 2;
  for (let round = 0; round < MAX_FIT_ROUNDS && room > 0; round++) {
    const headCount = Math.floor(room * headShare);
    const head = snapHead(cleanEnd(counter.decode(ids.slice(0, headCount))));
    const tail = snapTail(cleanStart(counter.decode(ids.slice(ids.length - (room - headCount)))));
    // The tokens of the text not shown; counting the middle itself would tokenise most of a long file again.
    const omitted = ids.length - counter.count(head) - counter.count(tail);
    const excerpt = joinAround(head, omittedTokensMarker(omitted), tail);
    const tokens = counter.count(excerpt);
    if (tokens <= maxTokens) return { text: excerpt, tokens, truncated: true };
    room -= tokens - maxTokens + 2;
  }
  return markerOnly(counter, allOmitted);
}

/**
 * Counting what an excerpt leaves out means tokenising it: worth it for a text up to this many characters per token of
 * budget. Beyond, only the two ends are tokenised and the marker counts the bytes left out (exact, not a guess).
 */
const EXACT_COUNT_CHARACTERS_PER_TOKEN = 24;
/** Characters of each end tokenised for a long text: more than a token's worth of characters, for any text. */
const WINDOW_CHARACTERS_PER_TOKEN = 10;

/**
 * An excerpt of a file read whole or by its ends. A file read by its ends, or too long to tokenise whole, says how
 * many bytes were left out rather than guessing their tokens.
 */
export function excerptFile(
  counter: TokenCounter,
  text: FileText,
  maxTokens: number,
  headShare = 0.6,
): Excerpt {
  if (text.kind === 'whole' && text.text.length <= maxTokens * EXACT_COUNT_CHARACTERS_PER_TOKEN) {
    return shrinkToTokens(counter, text.text, maxTokens, headShare);
  }
  // Only the ends are tokenised, each no longer than the whole budget could show.
  const window = maxTokens * WINDOW_CHARACTERS_PER_TOKEN;
  const headSource = text.kind === 'whole' ? text.text : text.head;
  const tailSource = text.kind === 'whole' ? text.text : text.tail;
  const file = {
    head: headSource.slice(0, window).replace(/[\uD800-\uDBFF]$/u, ''),
    tail: tailSource.slice(-window).replace(/^[\uDC00-\uDFFF]/u, ''),
    totalBytes: text.kind === 'whole' ? Buffer.byteLength(text.text) : text.totalBytes,
  };
  const readBytes = Buffer.byteLength(file.head) + Buffer.byteLength(file.tail);
  const provisional = omittedBytesMarker(file.totalBytes - readBytes);
  if (maxTokens < SMALLEST_USEFUL_EXCERPT) return markerOnly(counter, provisional);
  let room = maxTokens - counter.count(provisional) - 2;
  for (let round = 0; round < MAX_FIT_ROUNDS && room > 0; round++) {
    const headCount = Math.floor(room * headShare);
    const head = snapHead(takeHeadTokens(counter, file.head, headCount));
    const tail = snapTail(takeTailTokens(counter, file.tail, room - headCount));
    const omittedBytes = file.totalBytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
    const excerpt = joinAround(head, omittedBytesMarker(omittedBytes), tail);
    const tokens = counter.count(excerpt);
    if (tokens <= maxTokens) return { text: excerpt, tokens, truncated: true };
    room -= tokens - maxTokens + 2;
  }
  return markerOnly(counter, provisional);
}

function takeHeadTokens(counter: TokenCounter, text: string, count: number): string {
  const ids = counter.encode(text);
  return ids.length <= count ? text : cleanEnd(counter.decode(ids.slice(0, count)));
}

function takeTailTokens(counter: TokenCounter, text: string, count: number): string {
  const ids = counter.encode(text);
  return ids.length <= count ? text : cleanStart(counter.decode(ids.slice(ids.length - count)));
}

function markerOnly(counter: TokenCounter, marker: string): Excerpt {
  return { text: marker, tokens: counter.count(marker), truncated: true };
}

function joinAround(head: string, marker: string, tail: string): string {
  return `${head}${head === '' || head.endsWith('\n') ? '' : '\n'}${marker}\n${tail}`;
}

// A token cut can split a multi-byte character; its remains decode as U+FFFD.
function cleanEnd(text: string): string {
  return text.replace(/\uFFFD+$/u, '');
}

function cleanStart(text: string): string {
  return text.replace(/^\uFFFD+/u, '');
}

/** Ends the head at a line break when one is in its last quarter, so the excerpt shows whole lines. */
function snapHead(head: string): string {
  const lineEnd = head.lastIndexOf('\n');
  return lineEnd >= 0 && lineEnd >= head.length * 0.75 ? head.slice(0, lineEnd + 1) : head;
}

function snapTail(tail: string): string {
  const lineEnd = tail.indexOf('\n');
  return lineEnd >= 0 && lineEnd < tail.length * 0.25 ? tail.slice(lineEnd + 1) : tail;
}

/** A Markdown code fence long enough that nothing inside the body can close it. */
export function fenced(body: string, info = ''): string {
  let longestRun = 0;
  for (const run of body.match(/`+/g) ?? []) longestRun = Math.max(longestRun, run.length);
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}${info}\n${body}${body.endsWith('\n') || body === '' ? '' : '\n'}${fence}`;
}
