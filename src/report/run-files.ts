import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { z } from 'zod';

import { errorMessage } from '../errors.js';
import { describeIssues } from '../store/describe-issues.js';
import type { RecordDefinition } from '../store/record.js';
import { systemErrorCode } from '../store/system-error-code.js';

/**
 * Reads a run directory for the report: every file through its zod schema, and a file that is missing (a run stopped
 * half-way) or invalid becomes a note the report prints instead of an error that stops it.
 */
export class RunFiles {
  readonly notes: string[] = [];

  constructor(readonly directory: string) {}

  path(relative: string): string {
    return join(this.directory, relative);
  }

  /** A `defineRecord` file; `missing` says what its absence means, or nothing when absence is normal. */
  async record<Schema extends z.ZodObject>(
    definition: RecordDefinition<Schema>,
    relative: string,
    missing?: string,
  ): Promise<z.output<Schema> | undefined> {
    try {
      const value = await definition.readIfPresent(this.path(relative));
      if (value === undefined && missing) this.notes.push(`${relative} is missing: ${missing}`);
      return value;
    } catch (error) {
      this.notes.push(`${relative} was left out: ${errorMessage(error)}`);
      return undefined;
    }
  }

  /** A JSON file whose schema is plain zod (it carries its own `schemaVersion`). */
  async json<Schema extends z.ZodType>(
    schema: Schema,
    relative: string,
    missing?: string,
  ): Promise<z.output<Schema> | undefined> {
    const text = await this.text(relative, missing);
    if (text === undefined) return undefined;
    let decoded: unknown;
    try {
      decoded = JSON.parse(text);
    } catch (error) {
      this.notes.push(`${relative} was left out: it is not valid JSON (${errorMessage(error)})`);
      return undefined;
    }
    const parsed = schema.safeParse(decoded);
    if (!parsed.success) {
      this.notes.push(`${relative} was left out: ${describeIssues(parsed.error)}`);
      return undefined;
    }
    return parsed.data;
  }

  /**
   * Every line of a JSONL file. A last line without its newline is being appended (or was cut off by a stop) and is
   * left out, noted; any other bad line leaves the whole file out, noted.
   */
  async jsonLines<T>(schema: z.ZodType<T>, relative: string, what: string): Promise<T[]> {
    const text = await this.text(relative);
    if (text === undefined) return [];
    const lines = text.split('\n');
    const partial = lines.pop();
    if (partial !== undefined && partial.trim() !== '') {
      this.notes.push(
        `${relative}: its last line is unfinished (being written, or cut off by a stop); left out`,
      );
    }
    const values: T[] = [];
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      let decoded: unknown;
      try {
        decoded = JSON.parse(line);
      } catch (error) {
        this.notes.push(`${relative} was left out: line ${index + 1} is not JSON (${errorMessage(error)})`);
        return [];
      }
      const parsed = schema.safeParse(decoded);
      if (!parsed.success) {
        this.notes.push(
          `${relative} was left out: line ${index + 1} is not ${what} (${describeIssues(parsed.error)})`,
        );
        return [];
      }
      values.push(parsed.data);
    }
    return values;
  }

  async text(relative: string, missing?: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(relative), 'utf8');
    } catch (error) {
      if (systemErrorCode(error) !== 'ENOENT') {
        this.notes.push(`${relative} could not be read: ${errorMessage(error)}`);
      } else if (missing) {
        this.notes.push(`${relative} is missing: ${missing}`);
      }
      return undefined;
    }
  }

  /** The names of the folders directly under `relative`, sorted; none when it does not exist. */
  async folders(relative: string): Promise<string[]> {
    try {
      const entries = await readdir(this.path(relative), { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      if (systemErrorCode(error) !== 'ENOENT') {
        this.notes.push(`${relative} could not be listed: ${errorMessage(error)}`);
      }
      return [];
    }
  }

  /** The names of the files directly under `relative` that end in `suffix`, sorted. */
  async files(relative: string, suffix: string): Promise<string[]> {
    try {
      const entries = await readdir(this.path(relative), { withFileTypes: true });
      return entries
        .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
        .map((entry) => entry.name)
        .sort();
    } catch {
      return [];
    }
  }
}
