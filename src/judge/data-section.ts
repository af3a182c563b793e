import { createHash } from 'node:crypto';
import path from 'node:path';

import type { TokenCounter } from '../model/token-counter.js';
import {
  renderTextSection,
  type FileExcerpt,
  type FileReader,
  type RenderedSection,
} from './bundle-sections.js';
import { describeDataFile } from './data-sample.js';
import { fenced, shrinkToTokens } from './excerpt.js';
import { byCodeUnits, formatBytes, plural } from './format.js';
import { shownName } from './bundle-names.js';

/** Extensions of the input files sampled: data and notes about them, not the task's scripts. */
const DATA_EXTENSIONS = new Set(['.csv', '.tsv', '.json', '.jsonl', '.txt', '.md', '.dat', '.yaml', '.yml']);
/** Input files sampled at most; the others are counted. */
const MAX_SAMPLED_FILES = 8;
const SMALLEST_SAMPLE_TOKENS = 48;

/**
 * The task's input data as a bounded sample (`data-sample.ts`): the files the task put in the workspace, those the
 * task text names first, then in path order, each within `perFileTokens` and all within `budgetTokens`. Each sample is
 * an excerpt of the bundle, so a data file alike in two workspaces is shown once (`shared-files.ts`).
 */
export async function renderDataSection(options: {
  /** The task's input files present in the workspace. */
  inputs: readonly string[];
  taskText: string;
  reader: FileReader;
  counter: TokenCounter;
  budgetTokens: number;
  perFileTokens: number;
}): Promise<RenderedSection> {
  const { counter, reader } = options;
  const heading =
    "### The task's input data (a sample)\nWhat the task put in the workspace, as found after the run: each table's shape, a summary of its columns and its first rows.";
  const ordered = [...options.inputs]
    .filter((file) => DATA_EXTENSIONS.has(path.posix.extname(file).toLowerCase()))
    .sort(
      (left, right) =>
        Number(named(options.taskText, right)) - Number(named(options.taskText, left)) ||
        byCodeUnits(left, right),
    );
  if (ordered.length === 0) return renderTextSection(counter, 'data', '', 0);
  const parts = [heading];
  const excerpts: FileExcerpt[] = [];
  const notShown: string[] = [];
  let remaining = options.budgetTokens - counter.count(heading) - 40;
  for (const file of ordered) {
    const room = Math.min(options.perFileTokens, remaining);
    if (excerpts.length >= MAX_SAMPLED_FILES || room < SMALLEST_SAMPLE_TOKENS) {
      notShown.push(file);
      continue;
    }
    const read = await reader.read(file);
    const title = `#### \`${shownName(file)}\` (task input; ${formatBytes(reader.size(file))})`;
    let body: string;
    if (read.kind === 'text') body = fenced(describeDataFile(file, read.file), 'text');
    else if (read.kind === 'binary') body = '(binary file: not sampled)';
    else body = `(could not be read: ${read.reason})`;
    let piece = `${title}\n${body}`;
    if (counter.count(piece) > room && read.kind === 'text') {
      const description = describeDataFile(file, read.file);
      const bodyRoom = room - counter.count(title) - 8;
      piece = `${title}\n${fenced(shrinkToTokens(counter, description, bodyRoom, 0.8).text, 'text')}`;
    }
    const tokens = counter.count(piece);
    remaining -= tokens + 2;
    parts.push(piece);
    if (read.kind === 'text' && read.file.kind === 'whole') {
      const digest = createHash('sha256').update(read.file.text).digest('hex');
      excerpts.push({ path: file, digest, text: piece, tokens, wholeText: read.file.text });
    } else excerpts.push({ path: file, digest: null, text: piece, tokens });
  }
  if (notShown.length > 0)
    parts.push(`Not sampled: ${plural(notShown.length, 'more input file')} (see the file list).`);
  const section = renderTextSection(counter, 'data', parts.join('\n\n'), options.budgetTokens);
  return {
    ...section,
    itemsShown: excerpts.length,
    itemsNotShown: notShown.length,
    truncated: section.truncated || notShown.length > 0,
    excerpts: excerpts.filter((excerpt) => section.text.includes(excerpt.text)),
  };
}

/** Whether the task text names the file, by its path or its name. */
function named(taskText: string, file: string): boolean {
  return taskText.includes(file) || taskText.includes(path.posix.basename(file));
}
