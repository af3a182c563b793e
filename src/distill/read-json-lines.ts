import type { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { readLines } from '../store/bounded-lines.js';

/** The longest line read: V8 cannot hold a string of 512 MiB. */
const MAX_LINE_BYTES = 448 * 1024 ** 2;

/**
 * Every line of a JSONL file, each validated, read line by line (the file never becomes one string); a bad line, or
 * a last line without its end, is an error naming the file and line.
 */
export async function readJsonLines<T>(file: string, schema: z.ZodType<T>, what: string): Promise<T[]> {
  const values: T[] = [];
  let read;
  try {
    read = await readLines(file, { maxLineBytes: MAX_LINE_BYTES }, (line, number) => {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new UserError(`${file}: line ${number} is not JSON (${errorMessage(error)})`, { cause: error });
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new UserError(
          `${file}: line ${number} is not ${what} (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`,
        );
      }
      values.push(parsed.data);
    });
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`${file}: cannot read ${what} (${errorMessage(error)})`, { cause: error });
  }
  if (read === undefined) throw new UserError(`${file}: cannot read ${what} (the file does not exist)`);
  if (read.longLines.length > 0)
    throw new UserError(`${file}: line ${read.longLines[0]} is longer than any ${what} mass writes`);
  if (read.unfinishedLastLine) throw new UserError(`${file}: its last line is unfinished (not ${what})`);
  return values;
}
