import { createHash } from 'node:crypto';
import path from 'node:path';

import type { TokenCounter } from '../model/token-counter.js';
import { excerptFile, fenced, shrinkToTokens, type FileText } from './excerpt.js';
import { shownName } from './bundle-names.js';
import { byCodeUnits, formatBytes, formatCount, plural } from './format.js';
import type { RedactHostPaths } from './host-paths.js';
import { balanceAgentTextMarks, markJudgeDirectedText } from './judge-directed-text.js';
import { readWorkspaceText, type ReadResult, type WorkspaceListing } from './workspace-files.js';

/** One rendered section of a bundle, with what it cost and what it left out. */
export interface RenderedSection {
  name: string;
  text: string;
  tokens: number;
  budgetTokens: number;
  itemsShown: number;
  itemsNotShown: number;
  truncated: boolean;
  /** The files it shows an excerpt of, each as it appears in `text` (before any cut of the section). */
  excerpts?: FileExcerpt[];
}

/** One file's excerpt in a bundle: its heading and fenced text, and the digest of the whole file as read. */
export interface FileExcerpt {
  path: string;
  /** SHA-256 of the file's text (host paths replaced); null when only its ends were read. */
  digest: string | null;
  /** The excerpt as it appears in the bundle: the heading line, then the fenced text. */
  text: string;
  tokens: number;
  /** The file's whole text as read (host paths replaced); absent when only its ends were read. */
  wholeText?: string;
}

export interface ExcerptItem {
  path: string;
  /** Shown after the path in the item's heading, e.g. `entry point: \`python3 run.py\``. */
  note?: string;
}

/** Files are read once per bundle, whatever the number of fitting rounds. */
export class FileReader {
  private readonly cache = new Map<string, Promise<ReadResult>>();

  constructor(
    private readonly root: string,
    private readonly sizes: ReadonlyMap<string, number>,
    private readonly redact: RedactHostPaths,
  ) {}

  read(file: string): Promise<ReadResult> {
    let result = this.cache.get(file);
    if (!result) {
      result = readWorkspaceText(this.root, file, {
        maxWholeBytes: 4 * 1024 * 1024,
        endBytes: 256 * 1024,
      }).then((read) => (read.kind === 'text' ? { ...read, file: this.redactFile(read.file) } : read));
      this.cache.set(file, result);
    }
    return result;
  }

  /**
   * Text addressing the judge marked as the agent's (`judge-directed-text.ts`), then host paths replaced: marked
   * first, so that a placeholder such as `<workspace>` is never taken for the agent's tag.
   */
  private redactFile(file: FileText): FileText {
    const shown = (text: string) => this.redact(markJudgeDirectedText(text));
    return file.kind === 'whole'
      ? { kind: 'whole', text: shown(file.text) }
      : { ...file, head: shown(file.head), tail: shown(file.tail) };
  }

  size(file: string): number {
    return this.sizes.get(file) ?? 0;
  }
}

/** Below this, an item is named in the "not shown" line instead of being excerpted. */
const SMALLEST_ITEM_TOKENS = 48;
const NOT_SHOWN_RESERVE = 80;

const LANGUAGES: Record<string, string> = {
  '.py': 'python',
  '.sh': 'bash',
  '.json': 'json',
  '.jsonl': 'json',
  '.md': 'markdown',
  '.csv': 'csv',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.r': 'r',
  '.jl': 'julia',
  '.js': 'javascript',
  '.ts': 'typescript',
  '.diff': 'diff',
};

/**
 * Excerpts of files in priority order within a section budget: each item gets at most `perItemTokens`, items that no
 * longer fit are named at the end so the judge knows they exist.
 */
export async function renderExcerptSection(options: {
  name: string;
  heading: string;
  emptyText: string;
  items: readonly ExcerptItem[];
  reader: FileReader;
  counter: TokenCounter;
  budgetTokens: number;
  perItemTokens: number;
  headShare: number;
}): Promise<RenderedSection> {
  const { counter, reader, items } = options;
  const parts = [options.heading];
  const reserve = items.length > 1 ? NOT_SHOWN_RESERVE : 0;
  let remaining = options.budgetTokens - counter.count(options.heading) - 4 - reserve;
  const notShown: string[] = [];
  const excerpts: FileExcerpt[] = [];
  let shown = 0;
  let truncated = false;
  if (items.length === 0) parts.push(options.emptyText);
  for (const item of items) {
    const heading = `#### \`${shownName(item.path)}\` (${[item.note, formatBytes(reader.size(item.path))].filter(Boolean).join('; ')})`;
    const overhead = counter.count(heading) + 12;
    const room = Math.min(options.perItemTokens, remaining) - overhead;
    if (room < SMALLEST_ITEM_TOKENS) {
      notShown.push(item.path);
      continue;
    }
    const read = await reader.read(item.path);
    let body: string;
    if (read.kind === 'text') {
      const excerpt = excerptFile(counter, read.file, room, options.headShare);
      truncated ||= excerpt.truncated;
      body = fenced(
        balanceAgentTextMarks(excerpt.text),
        LANGUAGES[path.posix.extname(item.path).toLowerCase()] ?? '',
      );
    } else if (read.kind === 'binary') body = `(binary file, ${formatCount(read.bytes)} bytes: not shown)`;
    else body = `(could not be read: ${read.reason})`;
    const piece = `${heading}\n${body}`;
    const pieceTokens = counter.count(piece);
    remaining -= pieceTokens + 2;
    parts.push(piece);
    if (read.kind === 'text') {
      excerpts.push({
        path: item.path,
        digest: digestOf(read.file),
        text: piece,
        tokens: pieceTokens,
        ...(read.file.kind === 'whole' ? { wholeText: read.file.text } : {}),
      });
    }
    shown++;
  }
  if (notShown.length > 0) {
    truncated = true;
    // Name as many of the left-out files as the reserve allows; at worst only their number.
    let named = Math.min(12, notShown.length);
    let line = notShownLine(notShown, named);
    while (named > 0 && counter.count(line) > remaining + reserve) {
      named = Math.floor(named / 2);
      line = notShownLine(notShown, named);
    }
    parts.push(line);
  }
  const section = finishSection(counter, options.name, parts.join('\n\n'), options.budgetTokens, {
    itemsShown: shown,
    itemsNotShown: notShown.length,
    truncated,
  });
  return { ...section, excerpts: excerpts.filter((excerpt) => section.text.includes(excerpt.text)) };
}

function digestOf(file: FileText): string | null {
  return file.kind === 'whole' ? createHash('sha256').update(file.text).digest('hex') : null;
}

function notShownLine(files: string[], named: number): string {
  if (named === 0) return `Not shown for lack of room: ${plural(files.length, 'more file')}.`;
  const names = files
    .slice(0, named)
    .map((file) => `\`${shownName(file)}\``)
    .join(', ');
  const more = files.length > named ? ` and ${formatCount(files.length - named)} more` : '';
  return `Not shown for lack of room: ${names}${more}.`;
}

/** A section of plain text (preflight, integrity notes, process summary), cut only when over its budget. */
export function renderTextSection(
  counter: TokenCounter,
  name: string,
  text: string,
  budgetTokens: number,
): RenderedSection {
  return finishSection(counter, name, text, budgetTokens, {
    itemsShown: 0,
    itemsNotShown: 0,
    truncated: false,
  });
}

function finishSection(
  counter: TokenCounter,
  name: string,
  text: string,
  budgetTokens: number,
  stats: { itemsShown: number; itemsNotShown: number; truncated: boolean },
): RenderedSection {
  const cut = shrinkToTokens(counter, text, budgetTokens, 0.7);
  const shown = cut.truncated ? balanceAgentTextMarks(cut.text) : cut.text;
  return {
    name,
    text: shown,
    tokens: shown === cut.text ? cut.tokens : counter.count(shown),
    budgetTokens,
    itemsShown: stats.itemsShown,
    itemsNotShown: stats.itemsNotShown,
    truncated: stats.truncated || cut.truncated,
  };
}

/**
 * The file listing: every file when it fits, otherwise the most telling ones (deliverables, then the team's files,
 * shallow before deep, task inputs last), with counts of what was left out per top-level folder.
 */
export function renderTree(options: {
  listing: WorkspaceListing;
  deliverables: ReadonlySet<string>;
  inputs: ReadonlySet<string>;
  maxEntries: number;
  budgetTokens: number;
  counter: TokenCounter;
}): RenderedSection {
  const { listing, counter } = options;
  const fileCount = listing.entries.length;
  const rank = (file: string) => (options.deliverables.has(file) ? 0 : options.inputs.has(file) ? 2 : 1);
  const ranked = [...listing.entries].sort(
    (left, right) =>
      rank(left.path) - rank(right.path) ||
      left.path.split('/').length - right.path.split('/').length ||
      byCodeUnits(left.path, right.path),
  );
  let limit = Math.min(options.maxEntries, fileCount);
  for (;;) {
    const listed = ranked.slice(0, limit).sort((left, right) => byCodeUnits(left.path, right.path));
    const leftOut = ranked.slice(limit);
    const lines = listed.map((entry) =>
      entry.type === 'file'
        ? `${shownName(entry.path)}  ${formatBytes(entry.size)}`
        : `${shownName(entry.path)}  (${entry.type === 'symlink' ? 'symbolic link, not followed' : 'not a regular file'})`,
    );
    const header = [
      '### Files',
      `${plural(fileCount, 'file')}${listing.walkLimitReached ? ' or more (the listing stopped early)' : ''}, ${formatBytes(listing.totalBytes)} in all${
        leftOut.length > 0
          ? `; ${formatCount(listed.length)} listed (deliverables first, task inputs last), ${formatCount(leftOut.length)} not listed (${describeLeftOut(leftOut.map((entry) => entry.path))})`
          : ''
      }.`,
    ];
    if (listing.skippedFolders.length > 0) {
      const skipped = listing.skippedFolders
        .slice(0, 10)
        .map((folder) => `\`${shownName(folder.path)}/\` (${plural(folder.files, 'file')})`)
        .join(', ');
      header.push(
        `Tool and cache folders, not listed: ${skipped}${listing.skippedFolders.length > 10 ? ', …' : ''}.`,
      );
    }
    const text = `${header.join('\n')}\n${fenced(lines.join('\n'), 'text')}`;
    const tokens = counter.count(text);
    if (tokens <= options.budgetTokens || limit === 0) {
      return finishSection(counter, 'files', text, options.budgetTokens, {
        itemsShown: listed.length,
        itemsNotShown: leftOut.length,
        truncated: leftOut.length > 0,
      });
    }
    limit = Math.max(0, Math.min(limit - 1, Math.floor((limit * options.budgetTokens) / tokens) - 2));
  }
}

function describeLeftOut(paths: string[]): string {
  const byFolder = new Map<string, number>();
  for (const file of paths) {
    const top = file.includes('/') ? `${shownName(file.split('/')[0]!)}/` : '(top level)';
    byFolder.set(top, (byFolder.get(top) ?? 0) + 1);
  }
  const folders = [...byFolder.entries()].sort(
    (left, right) => right[1] - left[1] || byCodeUnits(left[0], right[0]),
  );
  const shown = folders.slice(0, 6).map(([folder, count]) => `${formatCount(count)} in ${folder}`);
  return `${shown.join(', ')}${folders.length > 6 ? ', …' : ''}`;
}
