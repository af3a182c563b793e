import { readFile } from 'node:fs/promises';

import { z } from 'zod';

import { UserError } from '../errors.js';
import { decodeJsonLine } from '../store/json-lines.js';

const PlayerId = z
  .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a string id') })
  .min(1, 'must be a non-empty id');

/**
 * One judgment between two players (episodes, workspaces). `a` is the one shown to the judge first
 * when the order is known; the fit itself does not use the order. Extra keys (rationale, judge,
 * order) are allowed and ignored.
 */
export const Match = z
  .object({
    a: PlayerId,
    b: PlayerId,
    winner: z.enum(['a', 'b', 'tie']),
  })
  .refine((match) => match.a !== match.b, {
    message: 'a and b are the same player; a match needs two different ids',
  });
export type Match = z.infer<typeof Match>;

/** Matches as typed arrays over player indices: what the fit iterates over. */
export interface IndexedMatches {
  /** Player ids, sorted; a player's index is its position here. */
  players: string[];
  first: Int32Array;
  second: Int32Array;
  /** 1 when `first` won, 0 when `second` won, 0.5 for a tie. */
  firstScore: Float64Array;
}

export interface PlayerRecord {
  wins: number;
  ties: number;
  losses: number;
}

/** Parses JSONL text; every bad row is reported as `file:line: what is wrong`. */
export function parseMatches(text: string, file: string): Match[] {
  const matches: Match[] = [];
  const problems: string[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line === '') continue;
    const decoded = decodeJsonLine(line, index + 1, Match, 'a match');
    if (decoded.ok) matches.push(decoded.value);
    else {
      const why = decoded.invalid
        ? describeRowIssues(decoded.invalid)
        : `not valid JSON (${decoded.syntaxError})`;
      problems.push(`${file}:${decoded.number}: ${why}`);
    }
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 10);
    if (problems.length > shown.length) shown.push(`… and ${problems.length - shown.length} more bad rows`);
    throw new UserError(
      `${shown.join('\n')}\nfix the row${problems.length === 1 ? '' : 's'}: each line must be {"a": id, "b": id, "winner": "a"|"b"|"tie"}`,
    );
  }
  if (matches.length === 0) {
    throw new UserError(`${file}: no matches; each line must be {"a": id, "b": id, "winner": "a"|"b"|"tie"}`);
  }
  return matches;
}

export async function readMatches(file: string): Promise<Match[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read matches file ${file}: ${(error as Error).message}`, { cause: error });
  }
  return parseMatches(text, file);
}

function describeRowIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.path.length === 0 && issue.code === 'invalid_type') return 'must be a JSON object';
      const field = issue.path.length > 0 ? `field "${issue.path.join('.')}"` : 'row';
      if (issue.code === 'invalid_value' && issue.path[0] === 'winner') {
        return `${field}: must be "a", "b" or "tie"`;
      }
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Indexes players by sorted id, so the result does not depend on row order. `players` adds ids
 * that may have no match (they still get a score under a prior).
 */
export function indexMatches(matches: readonly Match[], players: readonly string[] = []): IndexedMatches {
  const ids = new Set(players);
  for (const match of matches) {
    ids.add(match.a);
    ids.add(match.b);
  }
  const sorted = [...ids].sort(compareIds);
  const indexOf = new Map(sorted.map((id, index) => [id, index]));
  const first = new Int32Array(matches.length);
  const second = new Int32Array(matches.length);
  const firstScore = new Float64Array(matches.length);
  matches.forEach((match, index) => {
    first[index] = indexOf.get(match.a)!;
    second[index] = indexOf.get(match.b)!;
    firstScore[index] = match.winner === 'a' ? 1 : match.winner === 'b' ? 0 : 0.5;
  });
  return { players: sorted, first, second, firstScore };
}

/** Wins, ties and losses per player. */
export function tallyRecords(matches: readonly Match[]): Map<string, PlayerRecord> {
  const records = new Map<string, PlayerRecord>();
  const recordOf = (id: string): PlayerRecord => {
    let record = records.get(id);
    if (!record) records.set(id, (record = { wins: 0, ties: 0, losses: 0 }));
    return record;
  };
  for (const match of matches) {
    const a = recordOf(match.a);
    const b = recordOf(match.b);
    if (match.winner === 'tie') {
      a.ties++;
      b.ties++;
    } else if (match.winner === 'a') {
      a.wins++;
      b.losses++;
    } else {
      b.wins++;
      a.losses++;
    }
  }
  return records;
}

/** Code-point order: the same on every machine and locale. */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
