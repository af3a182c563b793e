import { z } from 'zod';

/**
 * The judge's list of points against one workspace: optional (a verdict without it is still a verdict, and its
 * points are then found in the rationale), and read leniently, since a malformed list is no reason to lose a verdict:
 * a single string is a list of one, entries that are not text are dropped. Points past `MAX_POINTS` are dropped and a
 * point longer than `MAX_POINT_CHARACTERS` is cut, as the judge's prompt says; `cuts` records each.
 */
const Points = z.preprocess(readPoints, z.array(z.string()).optional());

/**
 * The judge's answer in the prompt's terms: A and B are the workspaces as shown. `against_A` and `against_B` are its
 * short lists of shortcomings of each workspace, which the optimizer is shown as what to fix.
 */
export const Verdict = z.preprocess(
  (value) => noteCuts(normaliseKeys(value)),
  z.object({
    // Models write "Tie" or "a" often enough that a repair round for letter case alone would be waste.
    winner: z.preprocess(
      (value) => (typeof value === 'string' ? normaliseWinner(value) : value),
      z.enum(['A', 'B', 'tie']),
    ),
    rationale: z.string().trim().min(1, 'the rationale is empty'),
    against_A: Points,
    against_B: Points,
    /** What the parser cut from the lists, one line per list (absent when nothing was). */
    cuts: z.array(z.string()).optional(),
  }),
);
export type Verdict = z.infer<typeof Verdict>;

/** The points of a list as given: text entries, spaces collapsed, empty ones left out. */
function givenPoints(value: unknown): string[] {
  const items = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return items
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim().replace(/\s+/g, ' '))
    .filter((item) => item !== '');
}

function readPoints(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  return givenPoints(value)
    .slice(0, MAX_POINTS)
    .map((item) =>
      item.length > MAX_POINT_CHARACTERS ? `${item.slice(0, MAX_POINT_CHARACTERS - 1)}…` : item,
    );
}

/** One line per list the parser will cut: how many points it drops and how many it shortens. */
function noteCuts(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  const cuts = Array.isArray(object.cuts) ? object.cuts.filter((cut) => typeof cut === 'string') : [];
  for (const side of ['A', 'B'] as const) {
    const points = givenPoints(object[`against_${side}`]);
    const dropped = Math.max(0, points.length - MAX_POINTS);
    const shortened = points
      .slice(0, MAX_POINTS)
      .filter((point) => point.length > MAX_POINT_CHARACTERS).length;
    const parts = [
      ...(dropped > 0
        ? [`${dropped} point${dropped === 1 ? '' : 's'} past the first ${MAX_POINTS} dropped`]
        : []),
      ...(shortened > 0
        ? [`${shortened} point${shortened === 1 ? '' : 's'} cut at ${MAX_POINT_CHARACTERS} characters`]
        : []),
    ];
    if (parts.length > 0) cuts.push(`against_${side}: ${parts.join('; ')}`);
  }
  return cuts.length > 0 ? { ...object, cuts } : object;
}

/** `against_a`, `Against_B`: the lists under the names the prompt asks for, whatever their case. */
function normaliseKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = { ...(value as Record<string, unknown>) };
  for (const side of ['A', 'B'] as const) {
    const name = `against_${side}`;
    if (name in object) continue;
    const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
    if (key !== undefined) object[name] = object[key];
  }
  return object;
}

export type ParsedVerdict = { ok: true; value: Verdict } | { ok: false; error: string };

function normaliseWinner(value: string): string {
  const trimmed = value.trim();
  if (/^a$/i.test(trimmed)) return 'A';
  if (/^b$/i.test(trimmed)) return 'B';
  if (/^tie$/i.test(trimmed)) return 'tie';
  return trimmed;
}

/** How many `{` positions, counted from the end, are tried as the start of a JSON object. */
const MAX_CANDIDATE_STARTS = 400;

/**
 * Reads the verdict from a reply: the last JSON object in it that is a valid verdict, whether bare, inside a code
 * fence, or after reasoning text. An object that is JSON but not a verdict is reported as such, so the repair message
 * can say what was wrong.
 */
export function parseVerdict(reply: string): ParsedVerdict {
  const starts: number[] = [];
  for (let index = reply.length - 1; index >= 0 && starts.length < MAX_CANDIDATE_STARTS; index--) {
    if (reply[index] === '{') starts.push(index);
  }
  let best: { start: number; end: number; value: Verdict } | undefined;
  let lastJsonProblem: { end: number; error: string } | undefined;
  let lastSyntaxError: string | undefined;
  for (const start of starts) {
    const end = matchingBrace(reply, start);
    if (end === undefined) continue;
    if (best && (end < best.end || (end === best.end && start > best.start))) continue;
    let value: unknown;
    try {
      value = JSON.parse(reply.slice(start, end + 1));
    } catch (error) {
      lastSyntaxError ??= error instanceof Error ? error.message.split('\n')[0] : String(error);
      continue;
    }
    const verdict = Verdict.safeParse(value);
    if (verdict.success) {
      if (!best || end > best.end || (end === best.end && start < best.start)) {
        best = { start, end, value: verdict.data };
      }
    } else if (!lastJsonProblem || end > lastJsonProblem.end) {
      lastJsonProblem = { end, error: describeVerdictIssues(verdict.error) };
    }
  }
  if (best) return { ok: true, value: best.value };
  if (lastJsonProblem)
    return { ok: false, error: `the JSON object is not a verdict: ${lastJsonProblem.error}` };
  if (lastSyntaxError) return { ok: false, error: `no valid JSON object found (${lastSyntaxError})` };
  if (reply.trim() === '') return { ok: false, error: 'the reply is empty' };
  return { ok: false, error: 'no JSON object found in the reply' };
}

/** The index of the `}` closing the object opened at `start`, skipping braces inside strings. */
function matchingBrace(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index++;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') depth++;
    else if (character === '}') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return undefined;
}

function describeVerdictIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.join('.') || 'the object';
      if (issue.path[0] === 'winner') return `"winner" must be "A", "B" or "tie"`;
      if (issue.path[0] === 'rationale') return `"rationale" must be a non-empty string`;
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** Points kept per workspace and characters per point: the parser (`verdict.ts`) cuts to these, and says so. */
export const MAX_POINTS = 5;
export const MAX_POINT_CHARACTERS = 400;
