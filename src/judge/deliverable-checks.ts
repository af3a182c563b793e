import type { Deliverable } from '../tasks/manifest.js';
import { formatCount, plural } from './format.js';
import { containsNumber, inspectJson, isPlainObject, type JsonInspection } from './json-inspection.js';
import { inspectPng, SMALLEST_READABLE_PLOT_PIXELS } from './png.js';

/** What one file of a deliverable looks like; `invalid` means unreadable as its kind, `incomplete` readable but short of the task. */
export interface FileCheck {
  status: 'ok' | 'empty' | 'invalid' | 'incomplete';
  problems: string[];
  facts: string[];
}

export interface FileContent {
  size: number;
  /** The whole text, when the file is text and small enough to check; undefined otherwise. */
  text?: string;
  /** First and last bytes, for binary formats. */
  start: Buffer;
  end: Buffer;
}

export function checkDeliverableFile(deliverable: Deliverable, content: FileContent): FileCheck {
  if (content.size === 0) return { status: 'empty', problems: ['the file is empty'], facts: [] };
  if (deliverable.kind === 'plot') return checkPlot(content);
  if (content.text === undefined) {
    return {
      status: 'invalid',
      problems: [`not readable as text (${formatCount(content.size)} bytes)`],
      facts: [],
    };
  }
  if (content.text.trim() === '') return { status: 'empty', problems: ['only whitespace'], facts: [] };
  switch (deliverable.kind) {
    case 'report':
      return checkReport(content.text, deliverable.requiredSections, deliverable.minWords);
    case 'metrics-json':
    case 'json':
      return checkJsonObject(content.text, deliverable.requiredKeys, deliverable.kind === 'metrics-json');
    case 'ablation-json':
      return checkAblation(content.text, deliverable.minVariants);
    case 'csv':
      return checkCsv(content.text, deliverable.columns);
    case 'entry-point':
      return {
        status: 'ok',
        problems: [],
        facts: [`${plural(content.text.split('\n').length, 'line')}; run as \`${deliverable.command}\``],
      };
  }
}

function checkPlot(content: FileContent): FileCheck {
  const png = inspectPng(content.start, content.end);
  if (!png.ok) return { status: 'invalid', problems: [png.problem], facts: [] };
  const facts = [`PNG ${png.width}×${png.height} px`];
  const problems: string[] = [];
  if (!png.complete) problems.push('the PNG has no end chunk (truncated)');
  if (png.width < SMALLEST_READABLE_PLOT_PIXELS || png.height < SMALLEST_READABLE_PLOT_PIXELS) {
    problems.push(`only ${png.width}×${png.height} pixels: too small to show a result`);
  }
  return { status: problems.length > 0 ? 'invalid' : 'ok', problems, facts };
}

function checkReport(text: string, requiredSections: string[], minWords: number): FileCheck {
  const words = text.split(/\s+/).filter((word) => word !== '').length;
  const headings = markdownHeadings(text);
  const facts = [`${plural(words, 'word')}`, `${plural(headings.length, 'heading')}`];
  const problems: string[] = [];
  if (words < minWords)
    problems.push(`${formatCount(words)} words, fewer than the ${formatCount(minWords)} asked`);
  const missing = requiredSections.filter(
    (section) => !headings.some((heading) => headingMatches(heading, section)),
  );
  if (requiredSections.length > 0) {
    facts.push(
      `sections asked: ${requiredSections.length - missing.length} of ${requiredSections.length} found`,
    );
  }
  if (missing.length > 0) problems.push(`missing sections: ${missing.join(', ')}`);
  return { status: problems.length > 0 ? 'incomplete' : 'ok', problems, facts };
}

/** ATX (`## Results`) and setext headings, outside code fences. */
export function markdownHeadings(text: string): string[] {
  const headings: string[] = [];
  let fence: string | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (fence === undefined) fence = fenceMatch[1]![0];
      else if (fenceMatch[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) headings.push(atx[1]!);
    else if (
      line.trim() !== '' &&
      /^\s{0,3}(=+|-+)\s*$/.test(lines[index + 1] ?? '') &&
      !/^\s*[-*+]\s/.test(line)
    ) {
      headings.push(line.trim());
    }
  });
  return headings;
}

function normaliseHeading(text: string): string {
  return text
    .toLowerCase()
    .replace(/[*_`]/g, '')
    .replace(/^\s*(\d+(\.\d+)*|[ivx]+)[.)]?\s+/, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A heading matches a required section when it contains the section's words ("Results and discussion" ⊇ "Results"). */
function headingMatches(heading: string, section: string): boolean {
  const wanted = normaliseHeading(section);
  return wanted !== '' && ` ${normaliseHeading(heading)} `.includes(` ${wanted} `);
}

function jsonFailure(inspection: Extract<JsonInspection, { ok: false }>): FileCheck {
  const where = inspection.nonFiniteLiterals.map((at) => `\`${at}\``).join(', ');
  return {
    status: 'invalid',
    problems: [`not valid JSON: ${inspection.error}${where ? ` at ${where}` : ''}`],
    facts: [],
  };
}

function checkJsonObject(text: string, requiredKeys: string[], numbersMustBeFinite: boolean): FileCheck {
  const inspection = inspectJson(text);
  if (!inspection.ok) {
    const failure = jsonFailure(inspection);
    if (isPlainObject(inspection.lenientValue)) {
      const missing = requiredKeys.filter((key) => !(key in (inspection.lenientValue as object)));
      if (missing.length > 0) failure.problems.push(`required keys missing: ${missing.join(', ')}`);
    }
    return failure;
  }
  const { value } = inspection;
  if (!isPlainObject(value)) {
    return { status: 'invalid', problems: [`a JSON ${describeJsonType(value)}, not an object`], facts: [] };
  }
  const problems: string[] = [];
  const missing = requiredKeys.filter((key) => !(key in value));
  const nulls = requiredKeys.filter((key) => key in value && value[key] === null);
  if (missing.length > 0) problems.push(`required keys missing: ${missing.join(', ')}`);
  if (nulls.length > 0) problems.push(`required keys set to null: ${nulls.join(', ')}`);
  if (numbersMustBeFinite && inspection.nonFiniteStrings.length > 0) {
    problems.push(
      `non-finite values written as strings at ${inspection.nonFiniteStrings.map((at) => `\`${at}\``).join(', ')}`,
    );
  }
  const facts = [`${plural(Object.keys(value).length, 'top-level key')}`];
  if (requiredKeys.length > 0 && missing.length === 0 && nulls.length === 0)
    facts.push('all required keys present');
  return { status: problems.length > 0 ? 'incomplete' : 'ok', problems, facts };
}

function checkAblation(text: string, minVariants: number): FileCheck {
  const inspection = inspectJson(text);
  if (!inspection.ok) return jsonFailure(inspection);
  let container = inspection.value;
  if (isPlainObject(container) && (Array.isArray(container.variants) || isPlainObject(container.variants))) {
    container = container.variants;
  }
  const entries = Array.isArray(container)
    ? container
    : isPlainObject(container)
      ? Object.values(container)
      : [];
  const withNumbers = entries.filter(containsNumber).length;
  const facts = [`${plural(entries.length, 'variant')}, ${formatCount(withNumbers)} with numbers`];
  const problems =
    withNumbers < minVariants
      ? [
          `${formatCount(withNumbers)} variants with numbers, fewer than the ${formatCount(minVariants)} asked`,
        ]
      : [];
  if (inspection.nonFiniteStrings.length > 0) {
    problems.push(
      `non-finite values written as strings at ${inspection.nonFiniteStrings.map((at) => `\`${at}\``).join(', ')}`,
    );
  }
  return { status: problems.length > 0 ? 'incomplete' : 'ok', problems, facts };
}

function checkCsv(text: string, columns: string[]): FileCheck {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const header = splitCsvLine(lines[0] ?? '');
  const rows = lines.slice(1).map((line) => splitCsvLine(line));
  const problems: string[] = [];
  const missing = columns.filter((column) => !header.includes(column));
  if (missing.length > 0) problems.push(`columns missing: ${missing.join(', ')}`);
  if (rows.length === 0) problems.push('a header and no rows');
  const ragged = rows.filter((row) => row.length !== header.length).length;
  if (ragged > 0) problems.push(`${plural(ragged, 'row')} with a different number of cells than the header`);
  let nonFinite = 0;
  for (const row of rows) for (const cell of row) if (/^[-+]?(nan|inf|infinity)$/i.test(cell)) nonFinite++;
  if (nonFinite > 0) problems.push(`${plural(nonFinite, 'non-finite cell')} (NaN or inf)`);
  return {
    status: problems.length > 0 ? 'incomplete' : 'ok',
    problems,
    facts: [`${plural(rows.length, 'row')}, ${plural(header.length, 'column')}`],
  };
}

/** One CSV line into trimmed cells; quoted cells may hold the delimiter (a cell spanning lines is not supported). */
export function splitCsvLine(line: string, delimiter = ','): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < line.length; index++) {
    const character = line[index]!;
    if (quoted) {
      if (character === '"' && line[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (character === '"') quoted = false;
      else cell += character;
    } else if (character === '"') quoted = true;
    else if (character === delimiter) {
      cells.push(cell.trim());
      cell = '';
    } else cell += character;
  }
  cells.push(cell.trim());
  return cells;
}

function describeJsonType(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  return typeof value;
}
