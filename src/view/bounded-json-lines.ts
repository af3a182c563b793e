import type { z } from 'zod';

import { errorMessage } from '../errors.js';
import type { RunFiles } from '../report/run-files.js';
import { describeIssues } from '../store/describe-issues.js';
import { readLines, type LineLimits } from '../store/bounded-lines.js';

const number = new Intl.NumberFormat('en-US');

/**
 * Each valid value of a JSONL file of the run, handed to `onValue` as it is read (so a caller keeps only what it
 * needs of each), within `limits` (see bounded-lines.ts). What was passed over is noted on the page: lines over the
 * line limit, the rest of a file past the byte limit, an unfinished last line. A line that is not valid leaves the
 * whole file out, noted, as the report's reader does: false is returned, and the caller drops what it kept.
 */
export async function readJsonLines<T>(
  files: RunFiles,
  schema: z.ZodType<T>,
  relative: string,
  what: string,
  limits: LineLimits,
  onValue: (value: T, lineBytes: number) => void,
): Promise<boolean> {
  let failure: string | undefined;
  let read;
  try {
    read = await readLines(files.path(relative), limits, (line, lineNumber) => {
      if (line.trim() === '') return true;
      let decoded: unknown;
      try {
        decoded = JSON.parse(line);
      } catch (error) {
        failure = `line ${lineNumber} is not JSON (${errorMessage(error)})`;
        return false;
      }
      const parsed = schema.safeParse(decoded);
      if (!parsed.success) {
        failure = `line ${lineNumber} is not ${what} (${describeIssues(parsed.error)})`;
        return false;
      }
      onValue(parsed.data, Buffer.byteLength(line));
      return true;
    });
  } catch (error) {
    files.notes.push(`${relative} could not be read: ${errorMessage(error)}`);
    return false;
  }
  if (read === undefined) return true;
  if (failure !== undefined) {
    files.notes.push(`${relative} was left out: ${failure}`);
    return false;
  }
  if (read.longLines.length > 0) {
    const lines = read.longLines.slice(0, 10).join(', ') + (read.longLines.length > 10 ? ', …' : '');
    files.notes.push(
      `${relative}: ${read.longLines.length} line(s) longer than ${number.format(limits.maxLineBytes)} bytes ` +
        `were left out here (line ${lines}); open the file from the run directory`,
    );
  }
  if (read.stoppedEarly) {
    files.notes.push(
      `${relative} holds ${number.format(read.fileBytes)} bytes; only its first ` +
        `${number.format(read.bytesRead)} were read for this page`,
    );
  }
  if (read.unfinishedLastLine) {
    files.notes.push(
      `${relative}: its last line is unfinished (being written, or cut off by a stop); left out`,
    );
  }
  return true;
}
