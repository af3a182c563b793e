import { isDeepStrictEqual } from 'node:util';

import { fieldPath } from './describe-issues.js';

/** One field where two configurations disagree; `undefined` on a side means the field is absent there. */
export interface ConfigDifference {
  field: string;
  frozen: unknown;
  given: unknown;
}

/** The fields where `given` differs from `frozen`, descending into objects and equal-length arrays. */
export function configDifferences(frozen: unknown, given: unknown): ConfigDifference[] {
  const differences: ConfigDifference[] = [];
  collect(frozen, given, [], differences);
  return differences;
}

function collect(
  frozen: unknown,
  given: unknown,
  path: PropertyKey[],
  differences: ConfigDifference[],
): void {
  if (isDeepStrictEqual(frozen, given)) return;
  if (isObject(frozen) && isObject(given)) {
    const frozenFields = new Map(Object.entries(frozen));
    const givenFields = new Map(Object.entries(given));
    const fields = [...new Set([...frozenFields.keys(), ...givenFields.keys()])].sort();
    for (const field of fields) {
      collect(frozenFields.get(field), givenFields.get(field), [...path, field], differences);
    }
    return;
  }
  if (Array.isArray(frozen) && Array.isArray(given) && frozen.length === given.length) {
    frozen.forEach((item, index) => collect(item, given[index], [...path, index], differences));
    return;
  }
  differences.push({ field: fieldPath(path), frozen, given });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describeDifferences(differences: readonly ConfigDifference[], limit = 8): string {
  const lines = differences
    .slice(0, limit)
    .map(({ field, frozen, given }) => `${field}: ${preview(frozen)} in config.yaml, ${preview(given)} now`);
  const hidden = differences.length - lines.length;
  if (hidden > 0) lines.push(`... and ${hidden} more`);
  return lines.join('; ');
}

function preview(value: unknown): string {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
