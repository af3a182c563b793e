/**
 * The alignment of two sequences by longest common subsequence: what is kept, removed and added to turn one into the
 * other. The common head and tail are trimmed first; the middle is aligned by dynamic programming when that is cheap
 * and otherwise shown as one replaced block, so the cost stays bounded whatever the input.
 */

export type AlignmentOperation = 'same' | 'removed' | 'added';

export interface AlignmentStep<T> {
  op: AlignmentOperation;
  /** For `same`, the item of `before`. */
  item: T;
}

interface AlignmentOptions<T> {
  /** Whether two items count as the same; `===` unless given. */
  equals?: (before: T, after: T) => boolean;
  /** Beyond this many cells (middle of `before` × middle of `after`) the middle is replaced outright. */
  maxCells?: number;
}

export const DEFAULT_MAX_ALIGNMENT_CELLS = 4_000_000;

/**
 * The steps that turn `before` into `after`, in order. Where both a removal and an addition could come next, the
 * removal is listed first, so each change reads as its removed items followed by its added ones.
 */
export function alignSequences<T>(
  before: readonly T[],
  after: readonly T[],
  options: AlignmentOptions<T> = {},
): Array<AlignmentStep<T>> {
  const equals = options.equals ?? ((x: T, y: T) => x === y);
  const maxCells = options.maxCells ?? DEFAULT_MAX_ALIGNMENT_CELLS;
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && equals(before[prefix]!, after[prefix]!)) prefix++;
  let suffix = 0;
  while (
    suffix < before.length - prefix &&
    suffix < after.length - prefix &&
    equals(before[before.length - 1 - suffix]!, after[after.length - 1 - suffix]!)
  ) {
    suffix++;
  }
  const same = (item: T): AlignmentStep<T> => ({ op: 'same', item });
  return [
    ...before.slice(0, prefix).map(same),
    ...alignMiddle(
      before.slice(prefix, before.length - suffix),
      after.slice(prefix, after.length - suffix),
      equals,
      maxCells,
    ),
    ...before.slice(before.length - suffix).map(same),
  ];
}

function alignMiddle<T>(
  before: readonly T[],
  after: readonly T[],
  equals: (before: T, after: T) => boolean,
  maxCells: number,
): Array<AlignmentStep<T>> {
  if (before.length * after.length > maxCells || before.length === 0 || after.length === 0) {
    return [
      ...before.map((item): AlignmentStep<T> => ({ op: 'removed', item })),
      ...after.map((item): AlignmentStep<T> => ({ op: 'added', item })),
    ];
  }
  const columns = after.length + 1;
  // lengths[i * columns + j]: length of the longest common subsequence of before[i..] and after[j..]
  const lengths = new Uint32Array((before.length + 1) * columns);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      lengths[i * columns + j] = equals(before[i]!, after[j]!)
        ? lengths[(i + 1) * columns + j + 1]! + 1
        : Math.max(lengths[(i + 1) * columns + j]!, lengths[i * columns + j + 1]!);
    }
  }
  const steps: Array<AlignmentStep<T>> = [];
  let i = 0;
  let j = 0;
  while (i < before.length && j < after.length) {
    if (equals(before[i]!, after[j]!)) {
      steps.push({ op: 'same', item: before[i]! });
      i++;
      j++;
    } else if (lengths[(i + 1) * columns + j]! >= lengths[i * columns + j + 1]!) {
      steps.push({ op: 'removed', item: before[i++]! });
    } else {
      steps.push({ op: 'added', item: after[j++]! });
    }
  }
  while (i < before.length) steps.push({ op: 'removed', item: before[i++]! });
  while (j < after.length) steps.push({ op: 'added', item: after[j++]! });
  return steps;
}

/** How many steps at the start, and at the end, keep an item: the common head and tail of the two sequences. */
export function commonEnds<T>(steps: ReadonlyArray<AlignmentStep<T>>): { head: number; tail: number } {
  let head = 0;
  while (head < steps.length && steps[head]!.op === 'same') head++;
  if (head === steps.length) return { head, tail: 0 };
  let tail = 0;
  while (steps[steps.length - 1 - tail]!.op === 'same') tail++;
  return { head, tail };
}
