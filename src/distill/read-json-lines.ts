import { readFile } from 'node:fs/promises';

import type { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';

/** Every line of a JSONL file, each validated; a bad line is an error naming the file and line. */
export async function readJsonLines<T>(file: string, schema: z.ZodType<T>, what: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`${file}: cannot read ${what} (${errorMessage(error)})`, { cause: error });
  }
  const values: T[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new UserError(`${file}: line ${index + 1} is not JSON (${errorMessage(error)})`, {
        cause: error,
      });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UserError(
        `${file}: line ${index + 1} is not ${what} (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`,
      );
    }
    values.push(parsed.data);
  }
  return values;
}
