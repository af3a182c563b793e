import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { collectChampionRuns } from '../../src/distill/collect.js';
import { isRecord } from '../../src/model/stream-accumulator.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/testing/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const directory = temporaryDirectory();
let server: ScriptedServer | undefined;
afterAll(async () => {
  await server?.close();
  directory.remove();
});

describe('collecting champion runs', () => {
  it('tops up when a run fails, records why, and skips finished episodes when run again', async () => {
    // The harness sends the episode's seed with every call: the run with seed 101 meets a model error.
    server = await startScriptedServer({
      responder: (request) =>
        isRecord(request.body) && request.body.seed === 101
          ? step.status(400, { message: 'context length exceeded' })
          : step.text('Done.'),
    });
    const finished: string[] = [];
    const options = {
      episode: { taskDir, model: 'm', baseUrl: server.baseUrl, teacher: true, timeoutSeconds: 120 },
      outDir: directory.path,
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

    const calls = server.requests.length;
    const again = await collectChampionRuns(options);
    expect(again.episodes).toEqual(collection.episodes);
    expect(server.requests.length).toBe(calls);
  }, 180_000);
});
