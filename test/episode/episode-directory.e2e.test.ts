import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { EPISODE_MARKER, episodeDirectoryState } from '../../src/episode/episode-directory.js';
import { runEpisode } from '../../src/episode/run-episode.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const directory = temporaryDirectory();
afterAll(() => directory.remove());

/** A folder of someone's work: what `--out` must never delete. */
function thesisFolder(name: string): string {
  const folder = join(directory.path, name);
  mkdirSync(join(folder, 'data'), { recursive: true });
  writeFileSync(join(folder, 'thesis.tex'), '\\documentclass{article}\n');
  writeFileSync(join(folder, 'data', 'measurements.csv'), 'x\n1\n');
  return folder;
}

function expectUntouched(folder: string): void {
  expect(readdirSync(folder).sort()).toEqual(['data', 'thesis.tex']);
  expect(readFileSync(join(folder, 'data', 'measurements.csv'), 'utf8')).toBe('x\n1\n');
}

describe('the episode directory', () => {
  it('refuses a folder that is not an episode’s, deleting nothing', async () => {
    const folder = thesisFolder('thesis');
    const run = runEpisode({
      taskDir,
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
      seed: 1,
      outDir: folder,
    });
    await expect(run).rejects.toBeInstanceOf(UserError);
    await expect(run).rejects.toThrow(
      /thesis is not an episode directory \(it holds data, thesis\.tex\): an episode would delete what is there/,
    );
    expectUntouched(folder);
  });

  it('refuses it from the command line before anything else, with a usage error', async () => {
    const folder = thesisFolder('thesis-cli');
    const result = await runMass([
      'episode',
      '--task',
      taskDir,
      '--model',
      'm',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--seed',
      '1',
      '--out',
      folder,
    ]);
    // A UserError: exit code 2.
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is not an episode directory \(it holds data, thesis\.tex\)/);
    expectUntouched(folder);
  }, 60_000);

  it('recognises a half-finished episode, marked or from before the marker, and nothing else', async () => {
    const legacy = join(directory.path, 'legacy');
    mkdirSync(join(legacy, 'workspace'), { recursive: true });
    writeFileSync(join(legacy, 'prompt.md'), '# task\n');
    writeFileSync(join(legacy, 'requests.jsonl'), '');
    expect(await episodeDirectoryState(legacy)).toBe('episode');
    writeFileSync(join(legacy, 'notes.txt'), 'mine');
    expect(await episodeDirectoryState(legacy)).toBe('other');
    writeFileSync(join(legacy, EPISODE_MARKER), '');
    expect(await episodeDirectoryState(legacy)).toBe('episode');
    const onlyWorkspace = join(directory.path, 'only-workspace');
    mkdirSync(join(onlyWorkspace, 'workspace'), { recursive: true });
    expect(await episodeDirectoryState(onlyWorkspace)).toBe('other');
    expect(await episodeDirectoryState(join(directory.path, 'missing'))).toBe('empty');
    expect(await episodeDirectoryState(join(legacy, 'prompt.md'))).toBe('other');
  });

  it('redoes a half-finished episode in place, marked as an episode’s from the start', async () => {
    const outDir = join(directory.path, 'half-finished');
    mkdirSync(join(outDir, 'workspace', 'results'), { recursive: true });
    writeFileSync(join(outDir, EPISODE_MARKER), '');
    writeFileSync(join(outDir, 'workspace', 'results', 'stale.json'), '{}');
    writeFileSync(join(outDir, 'requests.jsonl'), '{"cut off');
    const server = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('Nothing to do.')] }).responder,
      models: ['m'],
    });
    try {
      const { record, ran } = await runEpisode({
        taskDir,
        model: 'm',
        baseUrl: server.baseUrl,
        seed: 1,
        outDir,
        timeoutSeconds: 120,
      });
      expect(ran).toBe(true);
      expect(record.status).toBe('success');
    } finally {
      await server.close();
    }
    expect(existsSync(join(outDir, 'workspace', 'results', 'stale.json'))).toBe(false);
    expect(existsSync(join(outDir, EPISODE_MARKER))).toBe(true);
    expect(await episodeDirectoryState(outDir)).toBe('episode');
  }, 120_000);
});
