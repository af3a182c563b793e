import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { collectChampionRuns } from '../../src/distill/collect.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { isRecord } from '../../src/model/stream-accumulator.js';
import { listFiles } from '../../src/tasks/materialize.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory();
let server: ScriptedServer | undefined;
afterAll(async () => {
  await server?.close();
  directory.remove();
});

/** tiny-sum with a generator that draws `data/draws.csv` from the seed it is given. */
function taskWithGenerator(): string {
  const taskDir = join(directory.path, 'tasks', 'tiny-sum');
  cpSync(fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url)), taskDir, { recursive: true });
  const manifest = parse(readFileSync(join(taskDir, 'task.yaml'), 'utf8')) as {
    inputs: Record<string, unknown>;
  };
  manifest.inputs.generator = { script: 'generator/generate.py' };
  writeFileSync(join(taskDir, 'task.yaml'), stringify(manifest));
  mkdirSync(join(taskDir, 'generator'));
  writeFileSync(
    join(taskDir, 'generator', 'generate.py'),
    [
      'import argparse, pathlib, random',
      'parser = argparse.ArgumentParser()',
      "parser.add_argument('--seed', type=int)",
      "parser.add_argument('--out')",
      'arguments = parser.parse_args()',
      'draw = random.Random(arguments.seed)',
      "pathlib.Path(arguments.out, 'draws.csv').write_text('x\\n' + ''.join(f'{draw.random()}\\n' for _ in range(5)))",
      '',
    ].join('\n'),
  );
  return taskDir;
}

describe('collecting champion runs', () => {
  it('runs every episode, top-ups too, on the same data with its own sampling seed; records why a run failed; skips finished episodes when run again', async () => {
    // The harness sends the episode's sampling seed with every call: the run with seed 101 meets a model error.
    server = await startScriptedServer({
      responder: (request) =>
        isRecord(request.body) && request.body.seed === 101
          ? step.status(400, { message: 'context length exceeded' })
          : step.text('Done.'),
    });
    const finished: string[] = [];
    const options = {
      episode: {
        taskDir: taskWithGenerator(),
        dataSeed: 7,
        model: 'm',
        baseUrl: server.baseUrl,
        teacher: true,
        timeoutSeconds: 120,
      },
      outDir: join(directory.path, 'episodes'),
      prefix: 'tiny-sum',
      runs: 3,
      needed: 3,
      maxTopUps: 2,
      firstSeed: 100,
      concurrency: 2,
      onEpisodeFinished: (episode: { episodeId: string }) => finished.push(episode.episodeId),
    };
    const collection = await collectChampionRuns(options);
    expect(collection).toMatchObject({ successes: 3, topUps: 1, enough: true });
    expect(collection.episodes.map((episode) => [episode.seed, episode.status])).toEqual([
      [100, 'success'],
      [101, 'failure'],
      [102, 'success'],
      [103, 'success'],
    ]);
    expect(collection.episodes[1]!.reason).toMatch(/^api_error: /);
    // Reported one by one as they finish: the three first runs, then the top-up.
    expect(finished.slice(0, 3).sort()).toEqual(['tiny-sum-0', 'tiny-sum-1', 'tiny-sum-2']);
    expect(finished[3]).toBe('tiny-sum-3');

    // The team only answered "Done.", so each workspace is as it started: the same files, byte for byte.
    const workspaces = collection.episodes.map((episode) => {
      const workspace = join(episode.dir, 'workspace');
      return listFiles(workspace).then((files) =>
        files.map((file) => [file, readFileSync(join(workspace, file), 'utf8')]),
      );
    });
    const contents = await Promise.all(workspaces);
    expect(contents[0]!.map(([file]) => file)).toContain('data/draws.csv');
    for (const content of contents.slice(1)) expect(content).toEqual(contents[0]);
    const records = await Promise.all(
      collection.episodes.map((episode) => EpisodeRecord.read(join(episode.dir, 'episode.json'))),
    );
    expect(records.map((record) => [record.seed, record.dataSeed])).toEqual([
      [100, 7],
      [101, 7],
      [102, 7],
      [103, 7],
    ]);

    const calls = server.requests.length;
    const again = await collectChampionRuns(options);
    expect(again.episodes).toEqual(collection.episodes);
    expect(server.requests.length).toBe(calls);
    // A finished episode asked for with another data seed is refused, not silently reused.
    const otherData = await collectChampionRuns({
      ...options,
      needed: 0,
      episode: { ...options.episode, dataSeed: 8 },
    });
    expect(otherData.episodes.map((episode) => episode.status)).toEqual(['error', 'error', 'error']);
    expect(otherData.episodes[0]!.reason).toContain('data seed 7, not 8');
    expect(server.requests.length).toBe(calls);
  }, 180_000);
});
