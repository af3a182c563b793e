import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { encodeRows, RECORDED_LOGS, wholeRows, writeLog } from './log-support.js';

const fixture = RECORDED_LOGS[0]!;
const normalised = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.stringify(JSON.parse(line)));

describe('mass log export', () => {
  const directory = temporaryDirectory();
  let episode: string;
  beforeAll(() => {
    // An episode directory whose proxy log the writer's encoder wrote (schemaVersion 2 rows).
    episode = join(directory.path, 'episode');
    writeLog(episode, encodeRows(wholeRows(fixture)));
  });
  afterAll(() => directory.remove());

  it('writes the log of an episode with every body whole, to standard output or a file', async () => {
    const expected = normalised(readFileSync(fixture, 'utf8'));
    const printed = await runMass(['log', 'export', episode]);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    expect(normalised(printed.stdout)).toEqual(expected);

    const out = join(directory.path, 'whole.jsonl');
    const written = await runMass(['log', 'export', episode, '--out', out]);
    expect(written.code).toBe(0);
    expect(written.stderr).toContain(`${expected.length} rows`);
    expect(normalised(readFileSync(out, 'utf8'))).toEqual(expected);
  });

  it('says which line of a damaged log cannot be rebuilt', async () => {
    const damaged = join(directory.path, 'damaged');
    const lines = encodeRows(wholeRows(fixture));
    writeLog(damaged, [lines[0]!, ...lines.slice(2)]);
    const result = await runMass(['log', 'export', damaged]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/requests\.jsonl: line \d+ (opens with|repeats)/);
  });
});
