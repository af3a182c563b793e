import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { exportProxyLog, wholeRowLine } from '../../src/proxy/log-export.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { encodeRows, RECORDED_LOGS, wholeRows, writeLog } from './log-support.js';

/** Each line of a JSONL file as `JSON.stringify` of its value. */
const normalised = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.stringify(JSON.parse(line)));

describe('mass log export: the log with every body whole', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it.each(RECORDED_LOGS)(
    'writes the rows of %s as earlier versions did, from its re-encoded log',
    async (fixture) => {
      const log = writeLog(directory.path, encodeRows(wholeRows(fixture)));
      const out = join(directory.path, 'whole.jsonl');
      expect(await exportProxyLog(log, out)).toBe(wholeRows(fixture).length);
      expect(normalised(out)).toEqual(normalised(fixture));
      // A log of whole bodies exports as it is, too.
      expect((await readProxyLog(fixture)).map(wholeRowLine)).toEqual(normalised(fixture));
    },
  );

  it('leaves no partial file behind when the log cannot be rebuilt', async () => {
    const lines = encodeRows(wholeRows(RECORDED_LOGS[0]!));
    const log = writeLog(directory.path, [lines[0]!, ...lines.slice(2)]);
    const out = join(directory.path, 'whole.jsonl');
    await expect(exportProxyLog(log, out)).rejects.toThrow(/line \d+ (opens with|repeats)/);
    expect(readdirSync(directory.path)).toEqual(['requests.jsonl']);
  });
});
