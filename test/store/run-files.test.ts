import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { RunFiles } from '../../src/store/run-files.js';

const Row = z.object({ id: z.number() });

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mass-run-files-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('RunFiles JSONL reading', () => {
  it('keeps the whole lines, noting a last line still being written and lines over the bound', async () => {
    await writeFile(
      join(directory, 'rows.jsonl'),
      `{"id":1}\n{"id":2,"pad":"${'x'.repeat(64)}"}\n{"id":3}\n{"id":4`,
    );
    const files = new RunFiles(directory);
    expect(await files.jsonLines(Row, 'rows.jsonl', 'a row', { maxLineBytes: 32 })).toEqual([
      { id: 1 },
      { id: 3 },
    ]);
    expect(files.notes).toEqual([
      'rows.jsonl: 1 line(s) longer than 32 bytes were left out here (line 2); open the file from the run directory',
      'rows.jsonl: its last line is unfinished (being written, or cut off by a stop); left out',
    ]);
  });

  it('leaves a file with a bad line out whole, noted, and has nothing for a missing file', async () => {
    await writeFile(join(directory, 'bad.jsonl'), '{"id":1}\n{"id":"two"}\n{"id":3}\n');
    const files = new RunFiles(directory);
    expect(await files.jsonLines(Row, 'bad.jsonl', 'a row')).toEqual([]);
    expect(await files.jsonLines(Row, 'missing.jsonl', 'a row')).toEqual([]);
    expect(files.notes).toEqual([
      'bad.jsonl was left out: line 2 is not a row (id: Invalid input: expected number, received string)',
    ]);
  });

  it('streams values with their size and reads no further than the byte bound', async () => {
    await writeFile(join(directory, 'many.jsonl'), '{"id":1}\n{"id":2}\n{"id":3}\n');
    const files = new RunFiles(directory);
    const seen: Array<[number, number]> = [];
    const kept = await files.eachJsonLine(
      Row,
      'many.jsonl',
      'a row',
      { maxLineBytes: 100, maxBytes: 10 },
      (row, bytes) => seen.push([row.id, bytes]),
    );
    expect(kept).toBe(true);
    expect(seen).toEqual([
      [1, 8],
      [2, 8],
    ]);
    expect(files.notes).toEqual(['many.jsonl holds 27 bytes; only its first 18 were read here']);
  });
});
