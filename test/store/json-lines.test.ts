import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { UserError } from '../../src/errors.js';
import {
  eachJsonLine,
  readJsonLines,
  readValidJsonLines,
  type JsonLine,
} from '../../src/store/json-lines.js';

const Row = z.object({ id: z.number(), name: z.string() });

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mass-json-lines-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function fileWith(name: string, text: string): Promise<string> {
  const file = join(directory, name);
  await writeFile(file, text);
  return file;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as Error;
}

describe('strict read', () => {
  it('reads every valid line, skipping blank ones', async () => {
    const file = await fileWith('good.jsonl', '{"id":1,"name":"a"}\n\n  \n{"id":2,"name":"b"}\n');
    expect(await readJsonLines(file, Row, 'a row')).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
  });

  it('names the file and the line of a line that is not JSON, or not the schema', async () => {
    const notJson = await fileWith('not-json.jsonl', '{"id":1,"name":"a"}\n{"id":2,\n');
    expect((await failure(readJsonLines(notJson, Row, 'a row'))).message).toMatch(
      new RegExp(`^${notJson}: line 2 is not JSON \\(`),
    );
    const invalid = await fileWith('invalid.jsonl', '{"id":1,"name":"a"}\n\n{"id":"3","name":"c"}\n');
    expect((await failure(readJsonLines(invalid, Row, 'a row'))).message).toBe(
      `${invalid}: line 3 is not a row (id: Invalid input: expected number, received string)`,
    );
  });

  it('refuses a line over the bound without loading it, a missing file and an unfinished last line', async () => {
    const long = await fileWith('long.jsonl', `{"id":1,"name":"${'x'.repeat(200)}"}\n`);
    expect((await failure(readJsonLines(long, Row, 'a row', { maxLineBytes: 100 }))).message).toBe(
      `${long}: line 1 is longer than 100 bytes: not a row mass writes`,
    );
    const missing = join(directory, 'missing.jsonl');
    expect((await failure(readJsonLines(missing, Row, 'a row'))).message).toContain('does not exist');
    expect(await readJsonLines(missing, Row, 'a row', { missing: 'empty' })).toEqual([]);
    const cut = await fileWith('cut.jsonl', '{"id":1,"name":"a"}\n{"id":2,"na');
    expect((await failure(readJsonLines(cut, Row, 'a row'))).message).toBe(
      `${cut}: its last line is unfinished (not a row)`,
    );
    expect(await readJsonLines(cut, Row, 'a row', { unfinishedLastLine: 'skip' })).toEqual([
      { id: 1, name: 'a' },
    ]);
  });
});

describe('lenient read', () => {
  it('skips and counts bad, long and partial lines: what a killed writer and agents leave', async () => {
    const file = await fileWith(
      'mixed.jsonl',
      [
        '{"id":1,"name":"a"}',
        'agent output',
        '{"id":"two"}',
        `{"id":3,"name":"${'x'.repeat(200)}"}`,
        '{"id":4,"name":"d"}',
        '{"id":5,"name":"e"', // the writer was killed here
      ].join('\n'),
    );
    const read = await readValidJsonLines(file, Row, { maxLineBytes: 100 });
    expect(read.values.map((row) => row.id)).toEqual([1, 4]);
    expect(read.skippedLines).toBe(4);
    expect(read.read).toMatchObject({ longLines: [4], unfinishedLastLine: true });
  });

  it('has nothing to read in a missing file', async () => {
    expect(await readValidJsonLines(join(directory, 'absent.jsonl'), Row)).toEqual({
      values: [],
      skippedLines: 0,
      read: undefined,
    });
  });
});

describe('streaming', () => {
  it('hands on each line as it is read, with its number, and stops when told', async () => {
    const file = await fileWith(
      'stream.jsonl',
      '{"id":1,"name":"a"}\nnot json\n{"id":3,"name":"c"}\n{"id":4,"name":"d"}\n',
    );
    const seen: Array<JsonLine<z.infer<typeof Row>>> = [];
    const read = await eachJsonLine(file, Row, 'a row', {}, (line) => {
      seen.push(line);
      return !(line.ok && line.value.id === 3);
    });
    expect(seen.map((line) => [line.number, line.ok])).toEqual([
      [1, true],
      [2, false],
      [3, true],
    ]);
    expect(seen[0]).toMatchObject({ ok: true, bytes: Buffer.byteLength('{"id":1,"name":"a"}') });
    expect(seen[1]).toMatchObject({ ok: false, problem: expect.stringMatching(/^is not JSON/) });
    expect(read?.bytesRead).toBeLessThan(read!.fileBytes);
  });

  it('stops at the byte bound', async () => {
    const file = await fileWith(
      'bounded.jsonl',
      '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n{"id":3,"name":"c"}\n',
    );
    const ids: number[] = [];
    const read = await eachJsonLine(file, Row, 'a row', { maxBytes: 25 }, (line) => {
      if (line.ok) ids.push(line.value.id);
    });
    expect(ids).toEqual([1, 2]);
    expect(read?.stoppedEarly).toBe(true);
  });
});
