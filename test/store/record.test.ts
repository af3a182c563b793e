import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { temporaryDirectory } from './__fixtures__/test-run.js';
import { defineRecord } from '../../src/store/record.js';

const VerdictRecord = defineRecord({
  kind: 'verdict',
  version: 2,
  schema: z.object({ winner: z.enum(['A', 'B', 'tie']), rationale: z.string(), confidence: z.number() }),
  // Version 1 had no confidence and called the rationale "reason".
  migrate: (body, fromVersion) => {
    if (fromVersion !== 1) throw new Error(`no conversion from version ${fromVersion}`);
    return { winner: body.winner, rationale: body.reason, confidence: 0.5 };
  },
});

describe('defineRecord', () => {
  it('writes pretty JSON led by schemaVersion and kind, and reads it back', async () => {
    const path = join(temporaryDirectory(), 'verdicts', 'v1.json');

    await VerdictRecord.write(path, { winner: 'A', rationale: 'ran the tests', confidence: 0.9 });

    expect(readFileSync(path, 'utf8')).toBe(
      '{\n  "schemaVersion": 2,\n  "kind": "verdict",\n  "winner": "A",\n  "rationale": "ran the tests",\n' +
        '  "confidence": 0.9\n}\n',
    );
    expect(await VerdictRecord.read(path)).toEqual({
      winner: 'A',
      rationale: 'ran the tests',
      confidence: 0.9,
    });
    expect(readdirSync(join(path, '..'))).toEqual(['v1.json']);
  });

  it('converts a record of an older version with migrate', () => {
    const stored = { schemaVersion: 1, kind: 'verdict', winner: 'B', reason: 'A crashed' };

    expect(VerdictRecord.parse(stored, 'verdicts/old.json')).toEqual({
      winner: 'B',
      rationale: 'A crashed',
      confidence: 0.5,
    });
  });

  it('validates what the migration returns', () => {
    const stored = { schemaVersion: 1, kind: 'verdict', winner: 'B' };

    expect(() => VerdictRecord.parse(stored, 'verdicts/old.json')).toThrow(
      'verdicts/old.json is not a valid "verdict" record: rationale: ',
    );
  });

  it('refuses to write an invalid value', async () => {
    const path = join(temporaryDirectory(), 'v.json');

    // @ts-expect-error: an invalid winner is the point of this test
    await expect(VerdictRecord.write(path, { winner: 'C', rationale: '', confidence: 1 })).rejects.toThrow(
      'refusing to write an invalid "verdict" record: winner: ',
    );
  });

  it('treats a missing file as absent with readIfPresent and as an error with read', async () => {
    const path = join(temporaryDirectory(), 'missing.json');

    expect(await VerdictRecord.readIfPresent(path)).toBeUndefined();
    await expect(VerdictRecord.read(path)).rejects.toThrow(`${path} is missing: expected a "verdict" record`);
  });

  it('refuses a schema that defines the envelope fields itself', () => {
    expect(() => defineRecord({ kind: 'bad', version: 1, schema: z.object({ kind: z.string() }) })).toThrow(
      'the schema must not define "kind"',
    );
  });
});
