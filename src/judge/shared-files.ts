import type { FileExcerpt } from './bundle-sections.js';
import { fenced } from './excerpt.js';
import { byCodeUnits, formatCount } from './format.js';
import { alignSequences, type AlignmentStep } from '../sequence-alignment.js';
import { shownName as shownFileName } from './bundle-names.js';

/**
 * The files two workspaces share, shown once. Two runs of one task often leave files that are the same in both, or
 * nearly (the task's own scripts and data, a module the teams did not touch, code two designs wrote alike, a script
 * one run changed in three lines): shown in full in each bundle, they would fill the prompt twice with nothing to tell
 * the workspaces apart. A file whose path and text are the same in both (its whole text, host paths replaced, not
 * only the part shown) is shown once, before the two workspaces. A file that differs in a small share of its lines is
 * shown once too, as one side's excerpt followed by the lines that differ, each with its side and its line number.
 * Each bundle keeps the file's heading with a note in place of its text. The judge's prompt and the optimizer's use
 * this one rule. Which excerpt is shown does not depend on the A/B order, so both orders of a judgment show the same
 * text; only the names of the sides follow the order.
 */

export interface BundleText {
  text: string;
  excerpts: readonly FileExcerpt[];
}

/** One file shown once: the same in both, or differing in a few lines. */
export interface SharedFile {
  path: string;
  /** The excerpt shown, the fuller of the two; `shownSide` says whose. */
  shown: FileExcerpt;
  shownSide: 'a' | 'b';
  /** Null when the file is the same in both. */
  difference: LineDifference | null;
}

export interface LineDifference {
  /** Lines of the whole file on each side. */
  lines: { a: number; b: number };
  /** Lines only one side has (removed from `a`, added in `b`). */
  changed: { a: number; b: number };
  hunks: LineHunk[];
}

/** A run of differing lines and the unchanged lines around it, numbered as in each side's file (from 1). */
export interface LineHunk {
  startA: number;
  startB: number;
  lines: Array<{ side: 'both' | 'a' | 'b'; text: string; lineA: number | null; lineB: number | null }>;
}

export interface SharedFiles {
  bundleA: string;
  bundleB: string;
  files: SharedFile[];
  /** Their paths, in the order shown. */
  paths: string[];
}

/**
 * How the two sides are named where the shared files are shown: the judge's A and B, or two versions' labels. `short`
 * marks each differing line (`A`, `v3`), `long` names the side in sentences (`Workspace A`).
 */
export interface SideNames {
  a: { short: string; long: string };
  b: { short: string; long: string };
}

/** The judge's names, for the side shown as A being `a` (`swapped`: being `b`). */
export function workspaceNames(swapped = false): SideNames {
  const name = (letter: string) => ({ short: letter, long: `Workspace ${letter}` });
  return swapped ? { a: name('B'), b: name('A') } : { a: name('A'), b: name('B') };
}

/**
 * An excerpt shorter than this stays in both bundles: its note in two places and the block's heading would cost about
 * what showing it twice does.
 */
export const SMALLEST_SHARED_EXCERPT_TOKENS = 100;
/** A file shown once with its differing lines: at most this share of each side's lines differ… */
export const MAX_DIFFERING_LINE_SHARE = 0.2;
/** …at least this many lines are the same in both… */
export const MIN_SHARED_LINES = 20;
/** …and its differing lines take at most this share of the excerpt they replace. */
const MAX_DIFFERENCE_SHARE_OF_EXCERPT = 0.5;
const CONTEXT_LINES = 2;
/** Characters of one differing line shown; a longer one is cut with a marker. */
const MAX_LINE_CHARACTERS = 300;

export const SHARED_NOTE = '(the same in both workspaces: shown once, before them)';
export const DIFFERING_NOTE =
  '(nearly the same in both workspaces: shown once, before them, with the lines that differ)';

interface ShareOptions {
  /** Replaces `SHARED_NOTE` and `DIFFERING_NOTE` where the shared files are not shown "before them". */
  notes?: { same: string; differing: string };
}

export function shareFiles(a: BundleText, b: BundleText, options: ShareOptions = {}): SharedFiles {
  const notes = options.notes ?? { same: SHARED_NOTE, differing: DIFFERING_NOTE };
  const inB = new Map(b.excerpts.map((excerpt) => [excerpt.path, excerpt]));
  const shared = a.excerpts
    .flatMap((left) => {
      const right = inB.get(left.path);
      if (!right || left.digest === null || right.digest === null) return [];
      if (Math.min(left.tokens, right.tokens) < SMALLEST_SHARED_EXCERPT_TOKENS) return [];
      if (!a.text.includes(left.text) || !b.text.includes(right.text)) return [];
      const shownSide = fuller(left, right);
      const shown = shownSide === 'a' ? left : right;
      if (left.digest === right.digest)
        return [{ left, right, file: sharedFile(left.path, shown, shownSide, null) }];
      const difference = nearlyTheSame(left, right);
      return difference ? [{ left, right, file: sharedFile(left.path, shown, shownSide, difference) }] : [];
    })
    .sort((left, right) => byCodeUnits(left.file.path, right.file.path));
  let bundleA = a.text;
  let bundleB = b.text;
  for (const { left, right, file } of shared) {
    const note = file.difference ? notes.differing : notes.same;
    bundleA = bundleA.replace(left.text, () => headingOnly(left, note));
    bundleB = bundleB.replace(right.text, () => headingOnly(right, note));
  }
  const files = shared.map((item) => item.file);
  return { bundleA, bundleB, files, paths: files.map((file) => file.path) };
}

function sharedFile(
  path: string,
  shown: FileExcerpt,
  shownSide: 'a' | 'b',
  difference: LineDifference | null,
): SharedFile {
  return { path, shown, shownSide, difference };
}

/**
 * The block of shared files, with the sides named as the reader knows them: each file once, and for a file that
 * differs, the lines that differ after it. Empty when the workspaces share none.
 */
export function renderSharedFiles(shared: Pick<SharedFiles, 'files'>, names: SideNames): string {
  if (shared.files.length === 0) return '';
  const same = shared.files.filter((file) => !file.difference).length;
  const [first, second] = [names.a.long, names.b.long].sort(byCodeUnits);
  const intro =
    same === shared.files.length
      ? `${same === 1 ? 'This file is' : 'These files are'} the same in ${first} and ${second}: each is shown once here, and each workspace's bundle names it where it would have been.`
      : `These files are in both ${first} and ${second}: each is shown once here, and each workspace's bundle names it where it would have been. A file marked "differs between ${first} and ${second}" is shown as one of them has it, followed by the lines that differ, each with its workspace and its line number there; every other line is the same in both.`;
  return [intro, ...shared.files.map((file) => renderFile(file, names))].join('\n\n');
}

function renderFile(file: SharedFile, names: SideNames): string {
  if (!file.difference) return file.shown.text;
  const { difference } = file;
  const [first, second] = (['a', 'b'] as const)
    .map((side) => ({ side, name: names[side].long }))
    .sort((left, right) => byCodeUnits(left.name, right.name));
  const shownName = names[file.shownSide].long;
  const counts = [first!, second!]
    .map(
      ({ side, name }) =>
        `${formatCount(difference.changed[side])} of ${formatCount(difference.lines[side])} lines only in ${name}`,
    )
    .join(', ');
  return [
    `Differs between ${first!.name} and ${second!.name} (${counts}). As ${shownName} has it:`,
    file.shown.text,
    `The lines of \`${shownFileName(file.path)}\` that differ between ${first!.name} and ${second!.name}:`,
    renderHunks(difference.hunks, names),
  ].join('\n');
}

/**
 * A unified-diff-like block, the side named first in code-unit order (A before B) leading: `@@ A lines 12–15, B lines
 * 12–16 @@` per hunk, then each line as `  12 | …` (the same in both, numbered as in the leading side), `A 13 | …` or
 * `B 13 | …` (only that side has it, numbered as there).
 */
export function renderHunks(hunks: readonly LineHunk[], names: SideNames): string {
  const flip = byCodeUnits(names.b.long, names.a.long) < 0;
  const [lead, other] = flip ? (['b', 'a'] as const) : (['a', 'b'] as const);
  const lineOn = (line: LineHunk['lines'][number], side: 'a' | 'b') =>
    side === 'a' ? line.lineA : line.lineB;
  const prefixWidth = Math.max(names.a.short.length, names.b.short.length);
  const body = hunks.flatMap((hunk) => {
    // Within a change, the leading side's lines come first.
    const groups = changeGroups(hunk.lines);
    const lines = hunk.lines
      .map((line, index) => ({ line, group: groups[index]! }))
      .sort(
        (left, right) =>
          left.group - right.group || Number(left.line.side === other) - Number(right.line.side === other),
      )
      .map(({ line }) => line);
    const count = (side: 'a' | 'b') => hunk.lines.filter((line) => lineOn(line, side) !== null).length;
    const start = (side: 'a' | 'b') => (side === 'a' ? hunk.startA : hunk.startB);
    const header = `@@ ${names[lead].short} ${range(start(lead), count(lead))}, ${names[other].short} ${range(start(other), count(other))} @@`;
    const width = Math.max(...hunk.lines.map((line) => String(line.lineA ?? line.lineB ?? 0).length));
    return [
      header,
      ...lines.map((line) => {
        const side = line.side === 'both' ? lead : line.side;
        const name = line.side === 'both' ? '' : names[line.side].short;
        return `${name.padEnd(prefixWidth)} ${String(lineOn(line, side)).padStart(width)} | ${cutLine(line.text)}`;
      }),
    ];
  });
  return fenced(body.join('\n'), 'text');
}

/** The group of each line of a hunk, in order: each unchanged line its own group, each run of changed lines one. */
function changeGroups(lines: ReadonlyArray<LineHunk['lines'][number]>): number[] {
  let group = 0;
  return lines.map((line, index) => {
    if (index > 0 && (line.side === 'both' || lines[index - 1]!.side === 'both')) group++;
    return group;
  });
}

function range(start: number, count: number): string {
  if (count === 0) return `no lines (after line ${formatCount(start - 1)})`;
  return count === 1
    ? `line ${formatCount(start)}`
    : `lines ${formatCount(start)}–${formatCount(start + count - 1)}`;
}

function cutLine(text: string): string {
  if (text.length <= MAX_LINE_CHARACTERS) return text;
  return `${text.slice(0, MAX_LINE_CHARACTERS)} [… ${formatCount(text.length - MAX_LINE_CHARACTERS)} characters omitted …]`;
}

/**
 * The line difference of two excerpts' files when it is small: few lines differ on either side, many are the same,
 * and the differing lines cost well under what the second excerpt does. Null otherwise (the file is shown in each
 * bundle).
 */
export function nearlyTheSame(left: FileExcerpt, right: FileExcerpt): LineDifference | null {
  if (left.wholeText === undefined || right.wholeText === undefined) return null;
  const linesA = splitLines(left.wholeText);
  const linesB = splitLines(right.wholeText);
  const steps = alignSequences(linesA, linesB);
  const changedA = steps.filter((step) => step.op === 'removed').length;
  const changedB = steps.filter((step) => step.op === 'added').length;
  const same = steps.length - changedA - changedB;
  // Files that differ only where lines do not show it (a final line break) are left to their bundles.
  if (same < MIN_SHARED_LINES || changedA + changedB === 0) return null;
  if (
    changedA > linesA.length * MAX_DIFFERING_LINE_SHARE ||
    changedB > linesB.length * MAX_DIFFERING_LINE_SHARE
  ) {
    return null;
  }
  const hunks = lineHunks(steps, CONTEXT_LINES);
  const characters = hunks.reduce(
    (sum, hunk) =>
      sum +
      hunk.lines.reduce((lineSum, line) => lineSum + Math.min(line.text.length, MAX_LINE_CHARACTERS) + 12, 0),
    0,
  );
  if (characters > Math.min(left.text.length, right.text.length) * MAX_DIFFERENCE_SHARE_OF_EXCERPT)
    return null;
  return { lines: { a: linesA.length, b: linesB.length }, changed: { a: changedA, b: changedB }, hunks };
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines;
}

/** The differing lines with `context` unchanged lines on each side; hunks closer than that are merged. */
export function lineHunks(steps: ReadonlyArray<AlignmentStep<string>>, context: number): LineHunk[] {
  const numbered: Array<LineHunk['lines'][number]> = [];
  let lineA = 1;
  let lineB = 1;
  for (const step of steps) {
    if (step.op === 'same') numbered.push({ side: 'both', text: step.item, lineA: lineA++, lineB: lineB++ });
    else if (step.op === 'removed')
      numbered.push({ side: 'a', text: step.item, lineA: lineA++, lineB: null });
    else numbered.push({ side: 'b', text: step.item, lineA: null, lineB: lineB++ });
  }
  const hunks: LineHunk[] = [];
  let index = 0;
  while (index < numbered.length) {
    if (numbered[index]!.side === 'both') {
      index++;
      continue;
    }
    let end = index;
    // Extend over differing lines and over unchanged runs short enough to join the next change.
    for (;;) {
      while (end < numbered.length && numbered[end]!.side !== 'both') end++;
      let next = end;
      while (next < numbered.length && numbered[next]!.side === 'both') next++;
      if (next < numbered.length && next - end <= context * 2) end = next;
      else break;
    }
    const start = Math.max(0, index - context);
    const stop = Math.min(numbered.length, end + context);
    const lines = numbered.slice(start, stop);
    hunks.push({ startA: positionOn(numbered, start, 'a'), startB: positionOn(numbered, start, 'b'), lines });
    index = stop;
  }
  return hunks;
}

/** The line number on one side at which the lines from `index` on begin. */
function positionOn(lines: ReadonlyArray<LineHunk['lines'][number]>, index: number, side: 'a' | 'b'): number {
  let count = 1;
  for (let position = 0; position < index; position++) {
    if ((side === 'a' ? lines[position]!.lineA : lines[position]!.lineB) !== null) count++;
  }
  return count;
}

/** The side whose excerpt shows more of the file; of two alike, the first in code-unit order, whichever side it is on. */
function fuller(left: FileExcerpt, right: FileExcerpt): 'a' | 'b' {
  if (left.tokens !== right.tokens) return left.tokens > right.tokens ? 'a' : 'b';
  return byCodeUnits(left.text, right.text) <= 0 ? 'a' : 'b';
}

function headingOnly(excerpt: FileExcerpt, note: string): string {
  return `${excerpt.text.split('\n', 1)[0]!}\n${note}`;
}
