import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { fitBradleyTerry, ringSchedule, seededRandom, type Match } from '../../src/ranking/index.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { ids, simulateMatches } from './support.js';

// Each `mass` call starts Node on the built dist/ (about a second); allow for a busy machine.
const CLI_TIMEOUT_MS = 90_000;

const directory = temporaryDirectory('mass-rank-');
afterAll(() => directory.remove());

function writeMatches(name: string, lines: string[]): string {
  const file = join(directory.path, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const players = ids(18);
const truth = Object.fromEntries(players.map((id, index) => [id, index / 5]));
const matches: Match[] = simulateMatches(truth, ringSchedule(players, { seed: 8 }), seededRandom(8), {
  tieRate: 0.1,
});
const matchesFile = writeMatches(
  'ring.jsonl',
  matches.map((match) => JSON.stringify(match)),
);

describe('mass rank', { timeout: CLI_TIMEOUT_MS }, () => {
  it('prints the fit as JSON, equal to the library fit', async () => {
    const result = await runMass(['rank', '--matches', matchesFile, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toEqual(JSON.parse(JSON.stringify(fitBradleyTerry(matches))));
    expect(printed).toMatchObject({
      converged: true,
      prior: 0.5,
      mode: 'map',
      stderrMethod: 'inverse-hessian',
    });
    expect(printed.ranking).toHaveLength(18);
  });

  it('prints a table with rank, id, score, ±stderr and wins/ties/losses', async () => {
    const file = writeMatches('small.jsonl', [
      '{"a":"x","b":"y","winner":"a"}',
      '{"a":"y","b":"z","winner":"tie"}',
      '{"a":"z","b":"x","winner":"b"}',
    ]);
    const result = await runMass(['rank', '--matches', file]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^3 players, 3 matches; Bradley–Terry maximum a posteriori, prior 0\.5 .*converged in \d+ iterations/,
    );
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/^rank\s+id\s+score\s+stderr\s+wins\s+ties\s+losses$/),
      expect.stringMatching(/^\s+1\s+x\s+\d\.\d{3}\s+±\d\.\d{3}\s+2\s+0\s+0$/),
      expect.stringMatching(/^\s+2\s+y\s+-\d\.\d{3}\s+±\d\.\d{3}\s+0\s+1\s+1$/),
      expect.stringMatching(/^\s+3\s+z\s+-\d\.\d{3}\s+±\d\.\d{3}\s+0\s+1\s+1$/),
    ]);
  });

  it('fits the official compatibility mode on request and says what it is', async () => {
    const result = await runMass(['rank', '--matches', matchesFile, '--official']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'official-compatibility update, prior 0.5 (not the maximum a posteriori of that prior)',
    );
  });

  it('exits with 2 naming the file, line and problem of a malformed row', async () => {
    const file = writeMatches('bad.jsonl', [
      '{"a":"x","b":"y","winner":"a"}',
      '{"a":"x","b":"y","winner":"draw"}',
    ]);
    const result = await runMass(['rank', '--matches', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:2: field "winner": must be "a", "b" or "tie"`);
    expect(result.stdout).toBe('');
  });

  it('exits with 2 for a player who never won under --prior 0, and for a bad --prior', async () => {
    const file = writeMatches('never.jsonl', [
      '{"a":"x","b":"y","winner":"a"}',
      '{"a":"y","b":"x","winner":"a"}',
      '{"a":"x","b":"z","winner":"a"}',
    ]);
    const unprioried = await runMass(['rank', '--matches', file, '--prior', '0']);
    expect(unprioried.code).toBe(2);
    expect(unprioried.stderr).toContain('z never won or tied a match');
    const badPrior = await runMass(['rank', '--matches', file, '--prior', 'half']);
    expect(badPrior.code).toBe(2);
    expect(badPrior.stderr).toContain('--prior "half": use a non-negative number');
  });
});
