/**
 * JSON as a deliverable check sees it. Python's `json.dump` writes NaN and Infinity as bare words, which no strict
 * JSON reader accepts; such a file is invalid, but saying *where* the non-finite values are is more useful to the
 * judge than a parser's position, so the file is read a second time with those words allowed.
 */
export type JsonInspection =
  | {
      ok: true;
      value: unknown;
      /** Where string values spell a non-finite number ("NaN", "inf"): valid JSON, but not a number. */
      nonFiniteStrings: string[];
    }
  | {
      ok: false;
      error: string;
      /** Where bare NaN / Infinity literals stand, when they are the only reason the text is not JSON. */
      nonFiniteLiterals: string[];
      /** The value read with those literals allowed, when that worked. */
      lenientValue?: unknown;
    };

const NON_FINITE_SENTINEL = '\u0000mass-non-finite:';
const NON_FINITE_STRING = /^\s*[-+]?(nan|inf|infinity)\s*$/i;

export function inspectJson(text: string): JsonInspection {
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value, nonFiniteStrings: findPaths(value, (item) => NON_FINITE_STRING.test(item)) };
  } catch (error) {
    const message = describeParseError(text, error);
    const replaced = replaceNonFiniteLiterals(text);
    if (replaced.count > 0) {
      try {
        const lenientValue: unknown = JSON.parse(replaced.text);
        const nonFiniteLiterals = findPaths(lenientValue, (item) => item.startsWith(NON_FINITE_SENTINEL));
        return {
          ok: false,
          error: `bare NaN/Infinity literal${nonFiniteLiterals.length === 1 ? '' : 's'} (not JSON)`,
          nonFiniteLiterals,
          lenientValue: restoreLiterals(lenientValue),
        };
      } catch {
        // Not only the literals are wrong: report the strict parser's complaint.
      }
    }
    return { ok: false, error: message, nonFiniteLiterals: [] };
  }
}

function describeParseError(text: string, error: unknown): string {
  // V8 quotes the text it failed on ('Unexpected token }, "{...}" is not valid JSON'): the workspace's own bytes,
  // which the judge sees in the excerpt anyway.
  const message = (error instanceof Error ? error.message : String(error)).replace(
    /, ".*" is not valid JSON$/s,
    '',
  );
  const position = /position (\d+)/.exec(message);
  const first = message.split('\n')[0]!.slice(0, 160);
  if (!position) return first;
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${first.replace(/ in JSON at position \d+.*$/, '')} at line ${line}, column ${column}`;
}

/** Replaces NaN, Infinity and -Infinity outside strings with sentinel strings. */
function replaceNonFiniteLiterals(text: string): { text: string; count: number } {
  let output = '';
  let count = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (inString) {
      output += character;
      if (character === '\\') {
        output += text[index + 1] ?? '';
        index++;
      } else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') {
      inString = true;
      output += character;
      continue;
    }
    const literal = /^(-?Infinity|NaN)\b/.exec(text.slice(index, index + 9));
    if (literal) {
      output += JSON.stringify(`${NON_FINITE_SENTINEL}${literal[1]}`);
      index += literal[1]!.length - 1;
      count++;
      continue;
    }
    output += character;
  }
  return { text: output, count };
}

function restoreLiterals(value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith(NON_FINITE_SENTINEL)) {
    const literal = value.slice(NON_FINITE_SENTINEL.length);
    return literal === 'NaN' ? Number.NaN : literal.startsWith('-') ? -Infinity : Infinity;
  }
  if (Array.isArray(value)) return value.map(restoreLiterals);
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, restoreLiterals(item)]));
  }
  return value;
}

/** JSON paths (`a.b[2].c`) of the string values that satisfy `test`, at most 20. */
function findPaths(value: unknown, test: (item: string) => boolean): string[] {
  const found: string[] = [];
  const visit = (item: unknown, at: string): void => {
    if (found.length >= 20) return;
    if (typeof item === 'string') {
      if (test(item)) found.push(at || '(top)');
    } else if (Array.isArray(item)) item.forEach((element, index) => visit(element, `${at}[${index}]`));
    else if (isPlainObject(item)) {
      for (const [key, element] of Object.entries(item)) visit(element, at ? `${at}.${key}` : key);
    }
  };
  visit(value, '');
  return found;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when some number lies anywhere inside (booleans are not numbers). */
export function containsNumber(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (Array.isArray(value)) return value.some(containsNumber);
  if (isPlainObject(value)) return Object.values(value).some(containsNumber);
  return false;
}
