import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/** A folder or file name as the run directory uses it: no separators, no `.`/`..`, nothing hidden at the start. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;

export function isRunName(name: string): boolean {
  return namePattern.test(name) && !name.includes('..');
}

/**
 * One segment of a workspace path from a URL, refused when it could leave the folder it is read in: `..`, `.`, an
 * empty segment (from `//` or a leading `/`), a separator or a NUL.
 */
export function isSafeSegment(segment: string): boolean {
  return (
    segment !== '' &&
    segment !== '.' &&
    segment !== '..' &&
    !segment.includes('/') &&
    !segment.includes('\\') &&
    !segment.includes('\0')
  );
}

/** The path's segments, each decoded; undefined when one cannot be decoded or is not safe. */
export function decodeSegments(path: string): string[] | undefined {
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (!isSafeSegment(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

/**
 * The real path of `segments` under `base`, or undefined when it does not exist or leaves `base` once symbolic
 * links are followed (a link an agent planted to `/etc/passwd` or to the run's own files).
 */
export async function resolveInside(base: string, segments: readonly string[]): Promise<string | undefined> {
  let realBase: string;
  let realTarget: string;
  try {
    realBase = await realpath(base);
    realTarget = await realpath(join(base, ...segments));
  } catch {
    return undefined;
  }
  const inside = relative(realBase, realTarget);
  if (inside === '') return realTarget;
  if (isAbsolute(inside) || inside === '..' || inside.startsWith(`..${sep}`)) return undefined;
  return realTarget;
}

/** A URL path made of segments, each encoded. */
export function encodePath(segments: readonly string[]): string {
  return segments.map((segment) => encodeURIComponent(segment)).join('/');
}
