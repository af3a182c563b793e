import { parse as parseYaml } from 'yaml';

/**
 * Finding a JSON or YAML object in a model's reply. Models wrap what they are asked for in Markdown fences,
 * put prose around it, leak `<think>` blocks into the content or leave a trailing comma; none of that should
 * cost a repair round when the object itself is there.
 */

/** Where in the reply an object was found. */
export type StructuredOrigin = 'fenced-json' | 'fenced-yaml' | 'fenced' | 'whole-text' | 'embedded-json';

export interface StructuredCandidate {
  origin: StructuredOrigin;
  /** The text the object was parsed from. */
  text: string;
  value: Record<string, unknown>;
}

export interface StructuredSearch {
  /** Every distinct object found, in the order tried: fenced blocks, the whole text, then `{…}` spans in prose. */
  candidates: StructuredCandidate[];
  /** Why the places tried gave no object, for an error message when `candidates` is empty. */
  failures: string[];
}

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)```/g;
const THINK_BLOCK = /<think>[\s\S]*?<\/think>/gi;

export function findStructuredObjects(reply: string): StructuredSearch {
  const text = reply.replace(THINK_BLOCK, '').trim();
  const attempts: Array<{ origin: StructuredOrigin; text: string; yaml: boolean }> = [];
  for (const match of text.matchAll(FENCE)) {
    const language = match[1]!.toLowerCase();
    const body = match[2]!;
    if (language === 'json' || language === 'jsonc')
      attempts.push({ origin: 'fenced-json', text: body, yaml: false });
    else if (language === 'yaml' || language === 'yml')
      attempts.push({ origin: 'fenced-yaml', text: body, yaml: true });
    else if (language === '') attempts.push({ origin: 'fenced', text: body, yaml: true });
  }
  attempts.push({ origin: 'whole-text', text, yaml: true });
  for (const span of braceSpans(text)) attempts.push({ origin: 'embedded-json', text: span, yaml: false });

  const candidates: StructuredCandidate[] = [];
  const failures: string[] = [];
  const seen = new Set<string>();
  for (const attempt of attempts) {
    const key = attempt.text.trim();
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    const parsed = parseObject(key, attempt.yaml);
    if (parsed.ok) candidates.push({ origin: attempt.origin, text: key, value: parsed.value });
    else failures.push(`${describeOrigin(attempt.origin)}: ${parsed.error}`);
  }
  return { candidates, failures };
}

function describeOrigin(origin: StructuredOrigin): string {
  switch (origin) {
    case 'fenced-json':
      return 'the ```json block';
    case 'fenced-yaml':
      return 'the ```yaml block';
    case 'fenced':
      return 'the fenced block';
    case 'whole-text':
      return 'the reply';
    case 'embedded-json':
      return 'the {…} in the text';
  }
}

type ObjectParse = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

function parseObject(text: string, allowYaml: boolean): ObjectParse {
  let jsonError: string;
  try {
    return asObject(JSON.parse(text));
  } catch (error) {
    jsonError = (error as Error).message;
  }
  const withoutTrailingCommas = text.replace(/,(\s*[}\]])/g, '$1');
  if (withoutTrailingCommas !== text) {
    try {
      return asObject(JSON.parse(withoutTrailingCommas));
    } catch {
      // fall through to YAML or the first JSON error
    }
  }
  if (!allowYaml) return { ok: false, error: `not valid JSON (${jsonError})` };
  try {
    return asObject(parseYaml(text));
  } catch (error) {
    const firstLine = (error as Error).message.split('\n')[0];
    return { ok: false, error: `neither JSON (${jsonError}) nor YAML (${firstLine})` };
  }
}

function asObject(value: unknown): ObjectParse {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return { ok: true, value: value as Record<string, unknown> };
  }
  const found = Array.isArray(value) ? 'a list' : value === null ? 'nothing' : `a ${typeof value}`;
  return { ok: false, error: `an object was expected, found ${found}` };
}

/**
 * Top-level `{…}` spans, matched with awareness of JSON strings so that a brace inside a string does not end a span;
 * then, when it differs, the span from the first `{` to the last `}` (for objects broken by an unbalanced brace in a string).
 */
function braceSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (inString) {
      if (escaped) escaped = false;
      else if (character === '\\') escaped = true;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"' && depth > 0) inString = true;
    else if (character === '{') {
      if (depth === 0) start = index;
      depth++;
    } else if (character === '}' && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, index + 1));
    }
  }
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) {
    const outer = text.slice(first, last + 1);
    if (!spans.includes(outer)) spans.push(outer);
  }
  return spans;
}
