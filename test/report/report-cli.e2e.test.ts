import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runMass } from '../support/cli.js';
import { writeSyntheticRun } from './synthetic-run.js';

// Split from read-run.test.ts: this one runs the `mass` CLI.
let root: string;
let run: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-report-'));
  run = join(root, 'run');
  await writeSyntheticRun(run);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('mass report', () => {
  it('mass report writes the file and prints its path', async () => {
    const out = join(root, 'cli', 'report.html');
    const written = await runMass(['report', run, '--out', out]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout.trim()).toBe(out);
    expect(written.stderr).toContain('1 file(s) missing or unreadable, listed under "Not shown"');
    const page = await readFile(out, 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
  }, 120_000);
});
