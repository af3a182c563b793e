import { realpathSync } from 'node:fs';
import { normalize, sep } from 'node:path';

/**
 * Step outputs are stored with every path inside the run written relative to the run, so that a run directory copied
 * or moved elsewhere reads its own files, not those of the run it was copied from. Which strings were paths is kept
 * beside the output (a list of locations), because an output may also hold relative paths on purpose (an episode's
 * `dir`) and ordinary text: only the strings listed are turned back into absolute paths, under the run's current
 * directory.
 */

/** Where a string sits in a JSON value: the keys and indices from its top. */
export type JsonLocation = Array<string | number>;

export interface RelativeOutput {
  value: unknown;
  /** The strings of `value` that are run-relative paths (`''` is the run directory itself). */
  locations: JsonLocation[];
}

/**
 * The directories a path inside the run may start with: the run directory as given, and its real path when a link
 * leads to it (code that resolved links, such as `realpath`, writes that one).
 */
export function runRoots(runDirectory: string): string[] {
  let real: string;
  try {
    real = realpathSync(runDirectory);
  } catch {
    real = runDirectory;
  }
  return real === runDirectory ? [runDirectory] : [runDirectory, real];
}

/**
 * The part of `text` after one of `roots` when `text` is a normalised absolute path at or under it; undefined
 * otherwise. Only normalised paths count: `<run>/../elsewhere` is not inside the run, wherever the run is.
 */
export function insideRoot(text: string, roots: readonly string[]): string | undefined {
  if (!text.startsWith(sep) || normalize(text) !== text) return undefined;
  for (const root of roots) {
    if (text === root) return '';
    if (text.startsWith(`${root}${sep}`)) return text.slice(root.length + sep.length);
  }
  return undefined;
}

/** A copy of `value` with every absolute path under one of `roots` made relative to it, and where those are. */
export function relativizePaths(value: unknown, roots: readonly string[]): RelativeOutput {
  const locations: JsonLocation[] = [];
  const visit = (node: unknown, location: JsonLocation): unknown => {
    if (typeof node === 'string') {
      const inside = insideRoot(node, roots);
      if (inside === undefined) return node;
      locations.push(location);
      return inside;
    }
    if (Array.isArray(node)) return node.map((item, index) => visit(item, [...location, index]));
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.entries(node).map(([key, item]) => [key, visit(item, [...location, key])]),
      );
    }
    return node;
  };
  return { value: visit(value, []), locations };
}

/**
 * `value` with the strings at `locations` turned back into absolute paths under `root`. A location that does not
 * lead to a string means the stored output is damaged: reported by the error `damaged` builds.
 */
export function resolvePaths(
  value: unknown,
  locations: readonly JsonLocation[],
  root: string,
  damaged: (why: string) => Error,
): unknown {
  let result = value;
  for (const location of locations) {
    const absolute = (relative: unknown): string => {
      if (typeof relative !== 'string') throw damaged(`no path at ${describeLocation(location)}`);
      return relative === '' ? root : `${root}${sep}${relative}`;
    };
    if (location.length === 0) {
      result = absolute(result);
      continue;
    }
    let parent: unknown = result;
    for (const step of location.slice(0, -1)) parent = child(parent, step);
    const last = location.at(-1)!;
    if (parent === null || typeof parent !== 'object') {
      throw damaged(`no path at ${describeLocation(location)}`);
    }
    // Defined, not assigned: a key such as `__proto__` is then an ordinary key, as JSON.parse made it.
    Object.defineProperty(parent, last, {
      value: absolute(child(parent, last)),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return result;
}

function child(node: unknown, step: string | number): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) return typeof step === 'number' ? node[step] : undefined;
  return Object.hasOwn(node, step) ? (node as Record<string, unknown>)[String(step)] : undefined;
}

function describeLocation(location: JsonLocation): string {
  return location.length === 0 ? 'the top' : location.map(String).join('.');
}

/** Reads the stored list of locations; undefined when it is not one. */
export function parseLocations(text: string): JsonLocation[] | undefined {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch {
    return undefined;
  }
  const isLocation = (item: unknown): item is JsonLocation =>
    Array.isArray(item) &&
    item.every((step) => typeof step === 'string' || (typeof step === 'number' && Number.isInteger(step)));
  return Array.isArray(decoded) && decoded.every(isLocation) ? decoded : undefined;
}
