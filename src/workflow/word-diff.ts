/** Word-level differences between two texts: the readable form of an edited instruction, and its size. */

export interface WordEdit {
  op: 'same' | 'removed' | 'added';
  text: string;
}

/** Beyond this many cells the middle of two texts is treated as replaced outright rather than aligned word by word. */
const MAX_ALIGNMENT_CELLS = 4_000_000;

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** The edits that turn `before` into `after`, consecutive words of one kind joined. */
export function wordEdits(before: string, after: string): WordEdit[] {
  const edits: WordEdit[] = [];
  for (const [op, word] of alignWords(words(before), words(after))) {
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
  const changed = alignWords(beforeWords, afterWords).filter(([op]) => op !== 'same').length;
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

type Aligned = Array<['same' | 'removed' | 'added', string]>;

function alignWords(before: string[], after: string[]): Aligned {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < before.length - prefix &&
    suffix < after.length - prefix &&
    before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
  ) {
    suffix++;
  }
  const head: Aligned = before.slice(0, prefix).map((word) => ['same', word]);
  const tail: Aligned = before.slice(before.length - suffix).map((word) => ['same', word]);
  const middle = alignMiddle(
    before.slice(prefix, before.length - suffix),
    after.slice(prefix, after.length - suffix),
  );
  return [...head, ...middle, ...tail];
}

/** Longest common subsequence by dynamic programming; removals are listed before additions at each change. */
function alignMiddle(before: string[], after: string[]): Aligned {
  if (before.length * after.length > MAX_ALIGNMENT_CELLS || before.length === 0 || after.length === 0) {
    return [
      ...before.map((word): Aligned[number] => ['removed', word]),
      ...after.map((word): Aligned[number] => ['added', word]),
    ];
  }
  const columns = after.length + 1;
  // lengths[i * columns + j]: length of the common subsequence of before[i..] and after[j..]
  const lengths = new Uint32Array((before.length + 1) * columns);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      lengths[i * columns + j] =
        before[i] === after[j]
          ? lengths[(i + 1) * columns + j + 1]! + 1
          : Math.max(lengths[(i + 1) * columns + j]!, lengths[i * columns + j + 1]!);
    }
  }
  const aligned: Aligned = [];
  let i = 0;
  let j = 0;
  while (i < before.length && j < after.length) {
    if (before[i] === after[j]) {
      aligned.push(['same', before[i]!]);
      i++;
      j++;
    } else if (lengths[(i + 1) * columns + j]! >= lengths[i * columns + j + 1]!) {
      aligned.push(['removed', before[i]!]);
      i++;
    } else {
      aligned.push(['added', after[j]!]);
      j++;
    }
  }
  while (i < before.length) aligned.push(['removed', before[i++]!]);
  while (j < after.length) aligned.push(['added', after[j++]!]);
  return aligned;
}
