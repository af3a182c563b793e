import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { FAULT_KINDS } from '../../src/config/fault-plan.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { toyResponder } from '../../src/toy/toy-model.js';
import { BASE_TOY_WEIGHTS } from '../../src/toy/weights.js';
import { runMass, startMass } from '../support/cli.js';
import { readProxyLog, temporaryDirectory, unusedPort } from '../support/fixtures.js';
import { sharedToySearch } from '../support/shared-runs.js';
import { fileHashes, searchDecisions } from './search-outcome.js';

/**
 * `mass search` on the toy model (one demo task, the reference and v0, one verdict), once on a sound server and then
 * on a flaky one that also goes down mid-search: the toy answers deterministically from the request, so a search that
 * loses nothing to the faults gives exactly the same champion, verdicts, episode outcomes and workspaces.
 */
const TASK = 'demo-volatility';
const EPISODES = ['reference', 'v0'];
/** Faults on 12 % of the requests, all kinds drawn evenly (a mid-stream cut among them); seed 15 puts a 5xx, two
 * resets and a cut among the first ten requests. */
const FAULTS = { rate: 0.12, seed: 15, kinds: [...FAULT_KINDS], hangSeconds: 0.5 };

const config = (name: string, executor: string, extra: string[] = []) =>
  [
    `name: ${name}`,
    `suite: ${DEMO_SUITE}`,
    `tasks: [${TASK}]`,
    `roles: { executor: ${executor} }`,
    'budgets: { episodeTimeoutSeconds: 150 }',
    'concurrency: { episodes: 2, judgments: 2, tasks: 1 }',
    'search: { iterations: 0 }',
    ...extra,
    '',
  ].join('\n');

describe('mass search rides out a flaky model server', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const servers: ScriptedServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    directory.remove();
  });

  const search = (name: string, text: string) => {
    const file = join(directory.path, `${name}.yaml`);
    writeFileSync(file, text);
    return ['search', '--config', file, '--runs', runs];
  };

  let baseline: Awaited<ReturnType<typeof outcome>>;
  beforeAll(async () => {
    // The sound run: the toy search of this task that other files read too (test/support/shared-runs.ts).
    const sound = await sharedToySearch();
    expect(sound.result.code, sound.result.stderr).toBe(0);
    baseline = await outcome(sound.run);
  }, 600_000);

  it('with faults before the first byte, cut streams and an 8 s outage: exactly the sound run’s results, the retries in the logs', async () => {
    const port = await unusedPort();
    const serve = async () => {
      // The toy model's answers from a scripted server, which records every request it receives.
      const server = await startScriptedServer({
        responder: toyResponder({ weights: BASE_TOY_WEIGHTS }),
        models: ['mass-toy'],
        chunkSize: 512,
        port,
        faults: FAULTS,
      });
      servers.push(server);
      return server;
    };
    const first = await serve();
    const args = search(
      'flaky',
      config('flaky', `{ model: mass-toy, baseUrl: "${first.baseUrl}" }`, [
        // A call gives up after 2 s, so the outage costs the episodes in flight; the search waits up to a minute.
        'faultTolerance: { callSeconds: 2, initialDelayMs: 100, maxDelayMs: 400, outageSeconds: 60, probeSeconds: 0.5 }',
      ]),
    );
    const { finished } = startMass(args);
    // Down for 8 s once the search is under way (ten chat requests in: all the faults drawn), then up again.
    const chatRequests = () => first.requests.filter((request) => request.method === 'POST').length;
    for (let waited = 0; chatRequests() < 10 && waited < 240_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await first.close();
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    await serve();
    const result = await finished;
    expect(result.code, result.stderr).toBe(0);

    const run = join(runs, 'flaky');
    expect(await outcome(run)).toEqual(baseline);
    expect(first.faults!.total).toBeGreaterThanOrEqual(3);
    expect(first.faults!.injected.get('drop_mid_stream')).toBeGreaterThanOrEqual(1);

    // Retries are in the proxy logs and counted in the episode records; no call failed in the episodes kept.
    let retried = 0;
    for (const version of EPISODES) {
      const episode = join(run, 'episodes', `L0-${TASK}-${version}`);
      const rows = readProxyLog(join(episode, 'requests.jsonl'));
      const record = await EpisodeRecord.read(join(episode, 'episode.json'));
      expect(record).toMatchObject({ status: 'success', failedModelCalls: 0 });
      expect(record.retriedModelCalls).toBe(rows.filter((row) => row.attempts!.length > 1).length);
      retried += record.retriedModelCalls!;
      for (const row of rows) expect(row.error).toBeNull();
    }
    expect(retried).toBeGreaterThanOrEqual(1);

    // The outage cost at least one episode, recorded and redone.
    const lost = readFileSync(join(run, 'outages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { what: string; error: string });
    expect(lost.some((row) => row.what.startsWith('episode '))).toBe(true);
    expect(result.stdout).toMatch(/lost to model-server outages and redone/);
  }, 420_000);

  it('stops with exit 3 when the server stays down past the outage budget, keeping nothing half-done', async () => {
    // The server lists its model, then goes away at the first chat request and does not come back.
    const server = await startScriptedServer({
      models: ['mass-toy'],
      responder: () => {
        void server.close();
        return step.hang();
      },
    });
    const args = search(
      'down',
      config('down', `{ model: mass-toy, baseUrl: "${server.baseUrl}" }`, [
        'faultTolerance: { callSeconds: 1, initialDelayMs: 100, maxDelayMs: 200, outageSeconds: 3, probeSeconds: 0.5 }',
      ]),
    );
    const result = await runMass(args);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/past the outage budget of 3 s .*run the same command again to resume/);
    const run = join(runs, 'down');
    expect(readFileSync(join(run, 'outages.jsonl'), 'utf8')).toMatch(/"what":"episode L0-demo-volatility-/);
    expect(existsSync(join(run, 'search', 'L0', TASK, 'result.json'))).toBe(false);
  }, 300_000);
});

/** What a search decided, and what its episodes left. */
async function outcome(run: string) {
  return {
    ...(await searchDecisions(run, TASK)),
    workspaces: Object.fromEntries(
      EPISODES.map((version) => [
        version,
        fileHashes(join(run, 'episodes', `L0-${TASK}-${version}`, 'workspace')),
      ]),
    ),
  };
}
