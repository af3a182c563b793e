/** Word-level differences between two texts: the readable form of an edited instruction, and its size. */

import { alignSequences } from '../sequence-alignment.js';

export interface WordEdit {
  op: 'same' | 'removed' | 'added';
  text: string;
}

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

export function wordCount(text: string): number {
  return words(text).length;
}

/** The edits that turn `before` into `after`, consecutive words of one kind joined. */
export function wordEdits(before: string, after: string): WordEdit[] {
  const edits: WordEdit[] = [];
  for (const { op, item: word } of alignSequences(words(before), words(after))) {
    const last = edits.at(-1);
    if (last && last.op === op) last.text += ` ${word}`;
    else edits.push({ op, text: word });
  }
  return edits;
}

/**
 * How much of two texts differs, from 0 (the same words in the same order) to 1 (no word in common):
 * words removed plus words added, over the words of both.
 */
export function wordEditRatio(before: string, after: string): number {
  const beforeWords = words(before);
  const afterWords = words(after);
  const total = beforeWords.length + afterWords.length;
  if (total === 0) return 0;
  const changed = alignSequences(beforeWords, afterWords).filter((step) => step.op !== 'same').length;
  return changed / total;
}

/** `kept [-removed-] {+added+}`, as `git diff --word-diff` writes it. */
export function renderWordDiff(edits: WordEdit[]): string {
  return edits
    .map((edit) =>
      edit.op === 'same' ? edit.text : edit.op === 'removed' ? `[-${edit.text}-]` : `{+${edit.text}+}`,
    )
    .join(' ');
}
