import { compareIds } from '../../ranking/matches.js';

/** Items grouped by a key, groups in code-point order of their keys so every figure lists them the same way on every machine. */
export function groupBy<Item>(items: Iterable<Item>, keyOf: (item: Item) => string): Map<string, Item[]> {
  const groups = new Map<string, Item[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return new Map([...groups].sort(([left], [right]) => compareIds(left, right)));
}

/** One key from several fields; the separator cannot occur in a label typed by a person. */
export function compositeKey(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/** Distinct values in code-point order. */
export function distinctSorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareIds);
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}
