import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { CapturedOutputFile } from '../../src/harness/captured-output.js';
import { readLines } from '../../src/store/bounded-lines.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory();
afterAll(() => directory.remove());

describe('reading what came from inside a sandbox', () => {
  it('skips a line over the limit whole and reads on after it, leaving out an unfinished last line', async () => {
    const file = join(directory.path, 'long-line.txt');
    writeFileSync(file, `first\n${'\0'.repeat(3 * 1024 ** 2)}\nthird\nlast without newline`);
    const lines: string[] = [];
    const read = await readLines(file, { maxLineBytes: 1024 ** 2 }, (line) => {
      lines.push(line);
    });
    expect(lines).toEqual(['first', 'third']);
    expect(read).toMatchObject({ longLines: [2], stoppedEarly: false, unfinishedLastLine: true });
  });

  it('stops at the first line end past the size limit', async () => {
    const file = join(directory.path, 'big.txt');
    writeFileSync(file, `${'a'.repeat(10)}\n${'b'.repeat(10)}\n${'c'.repeat(10)}\n`);
    const lines: string[] = [];
    const read = await readLines(file, { maxLineBytes: 100, maxBytes: 15 }, (line) => {
      lines.push(line);
    });
    expect(lines).toEqual(['a'.repeat(10), 'b'.repeat(10)]);
    expect(read).toMatchObject({ bytesRead: 22, stoppedEarly: true, longLines: [] });
  });
});

describe('capturing the harness’s output on the host', () => {
  it('cuts a line at the line limit and counts it, keeping the lines around it whole', () => {
    const file = join(directory.path, 'captured.jsonl');
    const capture = new CapturedOutputFile(file, { maxLineBytes: 8, maxFileBytes: 1024 });
    capture.sink.onData(Buffer.from('short\nthis line is far too long'));
    capture.sink.onData(Buffer.from(' and goes on\nok\n'));
    expect(capture.close()).toEqual({ receivedBytes: 47, keptBytes: 18, cutLines: 1, truncated: false });
    expect(readFileSync(file, 'utf8')).toBe('short\nthis lin\nok\n');
  });

  it('stops at the size limit, still taking (and counting) what comes', () => {
    const file = join(directory.path, 'capped.jsonl');
    const capture = new CapturedOutputFile(file, { maxLineBytes: 100, maxFileBytes: 10 });
    for (let index = 0; index < 100; index++) capture.sink.onData(Buffer.from('line\n'));
    capture.sink.onData(Buffer.from('past the limit'));
    const stats = capture.close();
    capture.write(Buffer.from('more'));
    expect(stats).toMatchObject({ keptBytes: 10, cutLines: 0, truncated: true });
    expect(stats.receivedBytes).toBe(100 * 5 + 'past the limit'.length);
    expect(readFileSync(file, 'utf8')).toBe('line\nline\n');
  });
});
