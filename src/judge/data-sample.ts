import path from 'node:path';

import { splitCsvLine } from './deliverable-checks.js';
import type { FileText } from './excerpt.js';
import { formatCount } from './format.js';

/**
 * A bounded, deterministic sample of one of the task's input files, so that a reader of the bundle can check what the
 * task and the lens say about the data (values below a quantification limit, a gap in a series) without the whole
 * file: a table's shape (rows × columns), a summary of each column and its first rows; a JSON document's shape and
 * head; any other text's line count and first lines. The same file always gives the same sample.
 */

/** Rows of a table shown after its header. */
export const SAMPLE_ROWS = 8;
/** Lines of other text shown. */
export const SAMPLE_LINES = 12;
/** Columns summarised; a wider table names how many more it has. */
const SUMMARISED_COLUMNS = 12;
/** Characters of one shown line; a longer one is cut with a marker. */
const LINE_CHARACTERS = 200;

export function describeDataFile(file: string, text: FileText): string {
  const extension = path.posix.extname(file).toLowerCase();
  const whole = text.kind === 'whole' ? text.text : null;
  const head = text.kind === 'whole' ? text.text : text.head;
  const readNote =
    text.kind === 'ends'
      ? ` Only the start of the file was read (${formatCount(text.totalBytes)} bytes in all): counts are of that part.`
      : '';
  if (extension === '.csv' || extension === '.tsv') {
    return describeTable(head, extension === '.tsv' ? '\t' : ',', whole === null) + readNote;
  }
  if (extension === '.json' && whole !== null) {
    const json = describeJson(whole);
    if (json !== null) return json;
  }
  const lines = splitLines(head, whole === null);
  const label = extension === '.jsonl' ? 'JSON lines' : 'lines';
  return [
    `${formatCount(lines.length)} ${label}${lines.length > SAMPLE_LINES ? `; the first ${SAMPLE_LINES}` : ''}:${readNote}`,
    ...lines.slice(0, SAMPLE_LINES).map((line) => cut(line)),
  ].join('\n');
}

function describeTable(text: string, delimiter: string, partial: boolean): string {
  const lines = splitLines(text, partial).filter((line) => line.trim() !== '');
  if (lines.length === 0) return 'An empty table.';
  const header = splitCsvLine(lines[0]!, delimiter);
  const rows = lines.slice(1).map((line) => splitCsvLine(line, delimiter));
  const summaries = header
    .slice(0, SUMMARISED_COLUMNS)
    .map((name, column) => summariseColumn(name, rows, column));
  const wider =
    header.length > SUMMARISED_COLUMNS
      ? ` (the first ${SUMMARISED_COLUMNS} of ${header.length} summarised)`
      : '';
  const ragged = rows.filter((row) => row.length !== header.length).length;
  return [
    `${formatCount(rows.length)} rows × ${formatCount(header.length)} columns (after the header line)${ragged > 0 ? `; ${formatCount(ragged)} rows have another number of fields` : ''}.`,
    `Columns${wider}:`,
    ...summaries.map((summary) => `- ${summary}`),
    `${rows.length > SAMPLE_ROWS ? `The header and the first ${SAMPLE_ROWS} rows` : 'The whole table'}:`,
    ...lines.slice(0, SAMPLE_ROWS + 1).map((line) => cut(line)),
  ].join('\n');
}

function summariseColumn(name: string, rows: readonly string[][], column: number): string {
  let empty = 0;
  let numeric = 0;
  let min = Infinity;
  let max = -Infinity;
  let negative = 0;
  const words = new Set<string>();
  for (const row of rows) {
    const cell = (row[column] ?? '').trim();
    if (cell === '') {
      empty++;
      continue;
    }
    const value = Number(cell);
    if (Number.isFinite(value)) {
      numeric++;
      min = Math.min(min, value);
      max = Math.max(max, value);
      if (value < 0) negative++;
    } else if (words.size < 4) words.add(cell);
  }
  const other = rows.length - empty - numeric;
  const parts: string[] = [];
  if (numeric > 0) {
    parts.push(
      `${formatCount(numeric)} numbers from ${formatNumber(min)} to ${formatNumber(max)}${negative > 0 ? ` (${formatCount(negative)} below zero)` : ''}`,
    );
  }
  if (other > 0) {
    const examples = [...words].map((word) => `"${cut(word, 40)}"`).join(', ');
    parts.push(`${formatCount(other)} other values (such as ${examples})`);
  }
  if (empty > 0) parts.push(`${formatCount(empty)} empty`);
  return `\`${cut(name, 60)}\`: ${parts.length > 0 ? parts.join(', ') : 'no values'}`;
}

function describeJson(text: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value)) {
    const keys = new Set<string>();
    for (const item of value.slice(0, 50)) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item))
        Object.keys(item).forEach((key) => keys.add(key));
    }
    const shape =
      keys.size > 0
        ? `A JSON array of ${formatCount(value.length)} items × ${formatCount(keys.size)} keys (${[...keys]
            .slice(0, SUMMARISED_COLUMNS)
            .map((key) => `\`${key}\``)
            .join(', ')}${keys.size > SUMMARISED_COLUMNS ? ', …' : ''})`
        : `A JSON array of ${formatCount(value.length)} items`;
    const shown = value.slice(0, SAMPLE_ROWS);
    return [
      `${shape}; ${value.length > SAMPLE_ROWS ? `the first ${SAMPLE_ROWS}` : 'all of them'}:`,
      ...shown.map((item) => cut(JSON.stringify(item))),
    ].join('\n');
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    return [
      `A JSON object with ${formatCount(entries.length)} keys${entries.length > SAMPLE_LINES ? `; the first ${SAMPLE_LINES}` : ''}:`,
      ...entries.slice(0, SAMPLE_LINES).map(([key, item]) => cut(`- \`${key}\`: ${describeJsonValue(item)}`)),
    ].join('\n');
  }
  return `A JSON ${typeof value}: ${cut(JSON.stringify(value))}`;
}

function describeJsonValue(value: unknown): string {
  if (Array.isArray(value)) {
    return `an array of ${formatCount(value.length)}${value.length > 0 ? `, starting ${JSON.stringify(value.slice(0, 3))}` : ''}`;
  }
  if (value !== null && typeof value === 'object')
    return `an object with keys ${Object.keys(value).slice(0, 8).join(', ')}`;
  return JSON.stringify(value);
}

/** Lines without the final empty one; of a partly read file, without its last, perhaps incomplete, line. */
function splitLines(text: string, partial: boolean): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (partial || lines.at(-1) === '') lines.pop();
  return lines;
}

function cut(text: string, limit = LINE_CHARACTERS): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)} [… ${formatCount(text.length - limit)} characters omitted …]`;
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
}
