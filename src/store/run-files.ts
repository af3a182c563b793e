import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { z } from 'zod';

import { errorMessage } from '../errors.js';
import { describeIssues } from './describe-issues.js';
import { eachJsonLine, MAX_JSON_LINE_BYTES, type JsonLineLimits } from './json-lines.js';
import type { RecordDefinition } from './record.js';
import { systemErrorCode } from './system-error-code.js';

const count = new Intl.NumberFormat('en-US');

/**
 * Reads a run directory for a page (the report, the viewer): every file through its zod schema, and a file that is
 * missing (a run stopped half-way) or invalid becomes a note the page prints instead of an error that stops it.
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

  /** Every line of a JSONL file, within `limits`, as `eachJsonLine` reads it; none when the file was left out. */
  async jsonLines<T>(
    schema: z.ZodType<T>,
    relative: string,
    what: string,
    limits: JsonLineLimits = {},
  ): Promise<T[]> {
    const values: T[] = [];
    const kept = await this.eachJsonLine(schema, relative, what, limits, (value) => void values.push(value));
    return kept ? values : [];
  }

  /**
   * Each valid value of a JSONL file, handed to `onValue` as it is read (so a caller keeps only what it needs of
   * each), within `limits` (see bounded-lines.ts). What was passed over is noted: lines over the line limit, the rest
   * of a file past the byte limit, a last line without its end (being appended, or cut off by a stop). A line that
   * is not valid leaves the whole file out, noted: false is returned, and the caller drops what it kept. A missing
   * file has no lines. An error `onValue` throws leaves the file out too, noted.
   */
  async eachJsonLine<T>(
    schema: z.ZodType<T>,
    relative: string,
    what: string,
    limits: JsonLineLimits,
    onValue: (value: T, lineBytes: number, lineNumber: number) => void,
  ): Promise<boolean> {
    let failure: string | undefined;
    let read;
    try {
      read = await eachJsonLine(this.path(relative), schema, what, limits, (line) => {
        if (!line.ok) {
          failure = `line ${line.number} ${line.problem}`;
          return false;
        }
        onValue(line.value, line.bytes, line.number);
      });
    } catch (error) {
      this.notes.push(`${relative} could not be read: ${errorMessage(error)}`);
      return false;
    }
    if (failure !== undefined) {
      this.notes.push(`${relative} was left out: ${failure}`);
      return false;
    }
    if (read === undefined) return true;
    if (read.longLines.length > 0) {
      const lines = read.longLines.slice(0, 10).join(', ') + (read.longLines.length > 10 ? ', …' : '');
      this.notes.push(
        `${relative}: ${read.longLines.length} line(s) longer than ${count.format(limits.maxLineBytes ?? MAX_JSON_LINE_BYTES)} ` +
          `bytes were left out here (line ${lines}); open the file from the run directory`,
      );
    }
    if (read.stoppedEarly) {
      this.notes.push(
        `${relative} holds ${count.format(read.fileBytes)} bytes; only its first ` +
          `${count.format(read.bytesRead)} were read here`,
      );
    }
    if (read.unfinishedLastLine) {
      this.notes.push(
        `${relative}: its last line is unfinished (being written, or cut off by a stop); left out`,
      );
    }
    return true;
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
