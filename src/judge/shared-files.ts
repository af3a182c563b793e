import type { FileExcerpt } from './bundle-sections.js';
import { byCodeUnits } from './format.js';

/**
 * The files two workspaces share, shown once. Two runs of one task often leave files that are the same in both (the
 * task's own scripts, a module the teams did not touch, code two designs wrote alike): shown in full in each bundle,
 * they would fill the judge's prompt twice with nothing to tell the workspaces apart. A file whose path and text are
 * the same in both (its whole text, host paths replaced, not only the part shown) is shown once, before the two
 * workspaces, and each bundle keeps its heading with a note in place of its text. Which excerpt is shown does not
 * depend on the A/B order, so both orders of a judgment show the same.
 */

export interface BundleText {
  text: string;
  excerpts: readonly FileExcerpt[];
}

export interface SharedFiles {
  bundleA: string;
  bundleB: string;
  /** The excerpts of the shared files, one after another; empty when the workspaces share none. */
  sameInBoth: string;
  /** Their paths, in the order shown. */
  paths: string[];
}

/**
 * An excerpt shorter than this stays in both bundles: its note in two places and the block's heading would cost about
 * what showing it twice does.
 */
export const SMALLEST_SHARED_EXCERPT_TOKENS = 100;

export const SHARED_NOTE = '(the same in both workspaces: shown once, before them)';

export function shareIdenticalFiles(a: BundleText, b: BundleText): SharedFiles {
  const inB = new Map(b.excerpts.map((excerpt) => [excerpt.path, excerpt]));
  const shared = a.excerpts
    .flatMap((left) => {
      const right = inB.get(left.path);
      if (!right || left.digest === null || left.digest !== right.digest) return [];
      if (Math.min(left.tokens, right.tokens) < SMALLEST_SHARED_EXCERPT_TOKENS) return [];
      if (!a.text.includes(left.text) || !b.text.includes(right.text)) return [];
      return [{ path: left.path, left, right, shown: fuller(left, right) }];
    })
    .sort((left, right) => byCodeUnits(left.path, right.path));
  let bundleA = a.text;
  let bundleB = b.text;
  for (const file of shared) {
    bundleA = bundleA.replace(file.left.text, () => headingOnly(file.left));
    bundleB = bundleB.replace(file.right.text, () => headingOnly(file.right));
  }
  const sameInBoth =
    shared.length === 0
      ? ''
      : [
          `${shared.length === 1 ? 'This file is' : 'These files are'} the same in Workspace A and Workspace B: each is shown once here, and each workspace's bundle names it where it would have been.`,
          ...shared.map((file) => file.shown.text),
        ].join('\n\n');
  return { bundleA, bundleB, sameInBoth, paths: shared.map((file) => file.path) };
}

/** The excerpt that shows more of the file; of two alike, the first in code-unit order, whichever side it is on. */
function fuller(left: FileExcerpt, right: FileExcerpt): FileExcerpt {
  if (left.tokens !== right.tokens) return left.tokens > right.tokens ? left : right;
  return byCodeUnits(left.text, right.text) <= 0 ? left : right;
}

function headingOnly(excerpt: FileExcerpt): string {
  return `${excerpt.text.split('\n', 1)[0]!}\n${SHARED_NOTE}`;
}
