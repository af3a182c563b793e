import type { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { readLines, type LinesRead } from './bounded-lines.js';
import { describeIssues } from './describe-issues.js';

/**
 * The one reader of JSONL files, on the bounded line reader (see bounded-lines.ts): a line over its byte bound is
 * passed over, never held. Three ways to read: `eachJsonLine` streams every line's outcome to the caller,
 * `readJsonLines` is strict (every line valid, or an error naming the file and the line), `readValidJsonLines` is
 * lenient (what is not a valid line is skipped and counted: agents' writes, a line cut at capture, the last line a
 * killed writer left partial).
 */

/** The longest line read unless a reader says otherwise: V8 cannot hold a string of 512 MiB. */
export const MAX_JSON_LINE_BYTES = 448 * 1024 ** 2;

export interface JsonLineLimits {
  /** Default: `MAX_JSON_LINE_BYTES`. */
  maxLineBytes?: number;
  /** Default: the whole file. */
  maxBytes?: number;
}

/** One non-blank line of a JSONL file, decoded; a failure says what is wrong with it. */
export type JsonLine<T> =
  | { ok: true; number: number; value: T; bytes: number }
  | { ok: false; number: number; problem: string; syntaxError?: string; invalid?: z.ZodError };

/**
 * A line decoded and validated. `what` names a valid line in the problem (`is not a thread (role: …)`); the parser's
 * message (`syntaxError`) or zod's issues (`invalid`) are kept for a reader that explains them its own way.
 */
export function decodeJsonLine<T>(
  line: string,
  number: number,
  schema: z.ZodType<T>,
  what: string,
): JsonLine<T> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(line);
  } catch (error) {
    const syntaxError = errorMessage(error);
    return { ok: false, number, problem: `is not JSON (${syntaxError})`, syntaxError };
  }
  const parsed = schema.safeParse(decoded);
  if (!parsed.success) {
    return {
      ok: false,
      number,
      problem: `is not ${what} (${describeIssues(parsed.error)})`,
      invalid: parsed.error,
    };
  }
  return { ok: true, number, value: parsed.data, bytes: Buffer.byteLength(line) };
}

/**
 * Streams each non-blank whole line of `file`, decoded, to `onLine`, which returns false to stop. What the line
 * reader passed over (long lines, an unfinished last line, the rest past `maxBytes`) is in the result. Undefined when
 * the file does not exist.
 */
export function eachJsonLine<T>(
  file: string,
  schema: z.ZodType<T>,
  what: string,
  limits: JsonLineLimits,
  onLine: (line: JsonLine<T>) => boolean | void,
): Promise<LinesRead | undefined> {
  return readLines(
    file,
    { maxLineBytes: limits.maxLineBytes ?? MAX_JSON_LINE_BYTES, maxBytes: limits.maxBytes },
    (line, number) => (line.trim() === '' ? true : onLine(decodeJsonLine(line, number, schema, what))),
  );
}

interface StrictReadOptions extends JsonLineLimits {
  /** What a missing file means: an error (default), or no lines. */
  missing?: 'error' | 'empty';
  /**
   * What a last line without its end means: an error (default), or a row its writer never finished (killed
   * mid-write), left out.
   */
  unfinishedLastLine?: 'error' | 'skip';
}

/**
 * Every line of a JSONL file, each valid, read line by line (the file never becomes one string); a line that is not
 * JSON, not `what`, or longer than the bound is an error naming the file and the line.
 */
export async function readJsonLines<T>(
  file: string,
  schema: z.ZodType<T>,
  what: string,
  options: StrictReadOptions = {},
): Promise<T[]> {
  const values: T[] = [];
  await eachStrictJsonLine(file, schema, what, options, (value) => void values.push(value));
  return values;
}

/**
 * `readJsonLines` streamed: each line's value, with its line number, handed to `onValue` as it is read, for a reader
 * whose lines depend on earlier ones (a proxy log's rows refer to earlier rows). An error `onValue` throws ends the
 * read and is thrown as it is.
 */
export async function eachStrictJsonLine<T>(
  file: string,
  schema: z.ZodType<T>,
  what: string,
  options: StrictReadOptions,
  onValue: (value: T, number: number) => void,
): Promise<void> {
  let failure: string | undefined;
  let thrown: { error: unknown } | undefined;
  let read;
  try {
    read = await eachJsonLine(file, schema, what, options, (line) => {
      if (!line.ok) {
        failure = `${file}: line ${line.number} ${line.problem}`;
        return false;
      }
      try {
        onValue(line.value, line.number);
      } catch (error) {
        thrown = { error };
        return false;
      }
    });
  } catch (error) {
    throw new UserError(`${file}: cannot read ${what} (${errorMessage(error)})`, { cause: error });
  }
  if (thrown !== undefined) throw thrown.error;
  if (failure !== undefined) throw new UserError(failure);
  if (read === undefined) {
    if (options.missing === 'empty') return;
    throw new UserError(`${file}: cannot read ${what} (the file does not exist)`);
  }
  if (read.longLines.length > 0) {
    const bound = options.maxLineBytes ?? MAX_JSON_LINE_BYTES;
    throw new UserError(
      `${file}: line ${read.longLines[0]} is longer than ${bound} bytes: not ${what} mass writes`,
    );
  }
  if (read.unfinishedLastLine && options.unfinishedLastLine !== 'skip') {
    throw new UserError(`${file}: its last line is unfinished (not ${what})`);
  }
}

export interface LenientRead {
  /** Lines left out: not JSON, not valid, over the line bound, or an unfinished last line. */
  skippedLines: number;
  /** What the line reader saw; undefined when the file does not exist. */
  read: LinesRead | undefined;
}

/** Streams each valid line's value to `onValue`, skipping and counting the rest. A missing file has none. */
export async function eachValidJsonLine<T>(
  file: string,
  schema: z.ZodType<T>,
  limits: JsonLineLimits,
  onValue: (value: T, number: number) => void,
): Promise<LenientRead> {
  let skippedLines = 0;
  const read = await eachJsonLine(file, schema, 'a valid line', limits, (line) => {
    if (line.ok) onValue(line.value, line.number);
    else skippedLines++;
  });
  if (read !== undefined) skippedLines += read.longLines.length + (read.unfinishedLastLine ? 1 : 0);
  return { skippedLines, read };
}

/** The valid lines of a JSONL file, and how many were skipped (see `eachValidJsonLine`). */
export async function readValidJsonLines<T>(
  file: string,
  schema: z.ZodType<T>,
  limits: JsonLineLimits = {},
): Promise<LenientRead & { values: T[] }> {
  const values: T[] = [];
  const result = await eachValidJsonLine(file, schema, limits, (value) => values.push(value));
  return { ...result, values };
}
