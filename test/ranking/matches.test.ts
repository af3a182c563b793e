import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { indexMatches, parseMatches, tallyRecords } from '../../src/ranking/index.js';

describe('match rows', () => {
  it('reads JSONL rows, skipping blank lines and ignoring extra keys', () => {
    const text = '{"a":"x","b":"y","winner":"a"}\n\n{"a":"y","b":"z","winner":"tie","rationale":"same"}\n';
    expect(parseMatches(text, 'matches.jsonl')).toEqual([
      { a: 'x', b: 'y', winner: 'a' },
      { a: 'y', b: 'z', winner: 'tie' },
    ]);
  });

  it('names the file, the line and what is wrong for every bad row', () => {
    const text = [
      '{"a":"x","b":"y","winner":"a"}',
      '{"a":"x","b":"y","winner":"A"}',
      '{"a":"x","winner":"b"}',
      'not json',
      '{"a":"x","b":"x","winner":"tie"}',
      '["x","y","a"]',
    ].join('\n');
    let message = '';
    try {
      parseMatches(text, 'runs/r/matches.jsonl');
    } catch (error) {
      expect(error).toBeInstanceOf(UserError);
      message = (error as Error).message;
    }
    expect(message.split('\n')).toEqual([
      'runs/r/matches.jsonl:2: field "winner": must be "a", "b" or "tie"',
      'runs/r/matches.jsonl:3: field "b": is missing',
      expect.stringMatching(/^runs\/r\/matches\.jsonl:4: not valid JSON \(/),
      'runs/r/matches.jsonl:5: row: a and b are the same player; a match needs two different ids',
      'runs/r/matches.jsonl:6: must be a JSON object',
      'fix the rows: each line must be {"a": id, "b": id, "winner": "a"|"b"|"tie"}',
    ]);
  });

  it('refuses a file without any match', () => {
    expect(() => parseMatches('\n\n', 'empty.jsonl')).toThrow(/empty\.jsonl: no matches/);
  });

  it('indexes players by sorted id and scores ties as one half', () => {
    const indexed = indexMatches(
      [
        { a: 'z', b: 'a', winner: 'b' },
        { a: 'm', b: 'z', winner: 'tie' },
      ],
      ['idle'],
    );
    expect(indexed.players).toEqual(['a', 'idle', 'm', 'z']);
    expect([...indexed.first]).toEqual([3, 2]);
    expect([...indexed.second]).toEqual([0, 3]);
    expect([...indexed.firstScore]).toEqual([0, 0.5]);
  });

  it('tallies wins, ties and losses', () => {
    const records = tallyRecords([
      { a: 'x', b: 'y', winner: 'a' },
      { a: 'y', b: 'x', winner: 'tie' },
    ]);
    expect(records.get('x')).toEqual({ wins: 1, ties: 1, losses: 0 });
    expect(records.get('y')).toEqual({ wins: 0, ties: 1, losses: 1 });
  });
});
