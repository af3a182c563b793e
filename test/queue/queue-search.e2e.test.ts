import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import type { QueueStatus } from '../../src/queue/queue-status.js';
import type { RunStatus } from '../../src/status/run-status.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { startToyModel } from '../../src/toy/toy-model.js';
import { PrivateRedis } from '../../src/testing/redis-server.js';
import { BASE_TOY_WEIGHTS } from '../../src/toy/weights.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { fileHashes, searchDecisions } from '../search/search-outcome.js';

/**
 * `mass search` over the demo tasks on the toy model, once with the local back-end and once through the queue: a
 * coordinator and three `mass worker` processes on this machine sharing the run folder, each worker in a working
 * directory of its own. Along the queued run a worker is SIGKILLed mid-episode, the coordinator is SIGKILLed and
 * started again, and Redis is restarted. The toy answers from the request alone, so a run that loses or repeats
 * nothing gives exactly the local run's champions, verdicts, episode outcomes and workspaces.
 */
const TASKS = ['demo-potency', 'demo-volatility'];
const VERSIONS = ['reference', 'v0'];
const EPISODES = TASKS.flatMap((task) => VERSIONS.map((version) => `L0-${task}-${version}`));
/** The CLI as installed (bin/mass.js on dist/, which the end-to-end tier builds first). */
const massCli = fileURLToPath(new URL('../../bin/mass.js', import.meta.url));
/** The executor's key: the coordinator and the workers each read it from their own environment. */
const KEY_VARIABLE = 'MASS_QUEUE_TEST_KEY';
const KEY = `secret-${process.pid}-never-in-redis`;
/** The secret the coordinator signs its jobs with: from its environment; the workers read it from a file. */
const QUEUE_SECRET = `queue-secret-${process.pid}-shared-by-coordinator-and-workers`;

describe('mass search through the episode queue (BullMQ on a real Redis, three worker processes)', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  let toy: ReplyServer;
  let redis: PrivateRedis;
  const workers = new Map<string, { child: ChildProcess; log: () => string }>();

  const searchArgs = (name: string, extra: string[]) => {
    const file = join(directory.path, `${name}.yaml`);
    writeFileSync(
      file,
      [
        `name: ${name}`,
        `suite: ${DEMO_SUITE}`,
        `tasks: [${TASKS.join(', ')}]`,
        `roles: { executor: { model: mass-toy, baseUrl: "${toy.baseUrl}", apiKeyEnv: ${KEY_VARIABLE} } }`,
        'budgets: { episodeTimeoutSeconds: 300 }',
        'concurrency: { episodes: 3, judgments: 2, tasks: 2 }',
        'search: { iterations: 0 }',
        ...extra,
        '',
      ].join('\n'),
    );
    return ['search', '--config', file, '--runs', runs];
  };

  beforeAll(async () => {
    // The model outside the coordinator, as a model server is: killing the coordinator does not take it down.
    toy = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy' });
    redis = await PrivateRedis.start(directory.path);
    const local = await runMass(searchArgs('local', []), { [KEY_VARIABLE]: KEY });
    expect(local.code, local.stderr).toBe(0);
  }, 600_000);

  afterAll(async () => {
    for (const { child } of workers.values()) killGroup(child, 'SIGKILL');
    await redis?.stop();
    await toy?.close();
    directory.remove();
  });

  it('gives the local run’s results through a killed worker, a restarted coordinator and a restarted Redis, running no episode twice', async () => {
    const secretFile = join(directory.path, 'queue-secret');
    writeFileSync(secretFile, `${QUEUE_SECRET}\n`, { mode: 0o600 });
    for (const name of ['w1', 'w2', 'w3']) {
      const cwd = join(directory.path, name);
      mkdirSync(cwd, { recursive: true });
      workers.set(
        name,
        startWorker(name, cwd, redis.url, runs, { secretFile, endpoint: new URL(toy.baseUrl).host }),
      );
    }
    const args = searchArgs('queued', [`execution: { backend: queue, redis: "${redis.url}" }`]);
    const coordinatorEnvironment = { [KEY_VARIABLE]: KEY, MASS_QUEUE_SECRET: QUEUE_SECRET };
    let coordinator = startMass(args, coordinatorEnvironment);
    const run = join(runs, 'queued');
    const staging = join(run, 'episodes', '.staging');

    // A worker caught with an episode half-written: killed with everything it started.
    const staged = await until(() => {
      if (!existsSync(staging)) return undefined;
      const attempt = readdirSync(staging).find((name) => readdirSync(join(staging, name)).length > 0);
      return attempt
        ? { worker: attempt.split('-')[0]!, episode: readdirSync(join(staging, attempt))[0]! }
        : undefined;
    });
    killGroup(workers.get(staged.worker)!.child, 'SIGKILL');

    // The coordinator killed once an episode has finished, and started again at once.
    await until(() => EPISODES.find((episode) => existsSync(join(run, 'episodes', episode, 'episode.json'))));
    coordinator.child.kill('SIGKILL');
    await coordinator.finished;
    coordinator = startMass(args, coordinatorEnvironment);

    // Redis restarted while episodes are still to come.
    await until(() => (finishedEpisodes(run).length >= 2 ? true : undefined));
    await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await redis.restart();

    const result = await coordinator.finished;
    expect(result.code, result.stderr).toBe(0);
    expect(await outcome(join(runs, 'queued'))).toEqual(await outcome(join(runs, 'local')));

    // Each episode started once on a worker, but the one whose worker was killed, which was redone by another.
    const logs = [...workers.values()].map((worker) => worker.log()).join('\n');
    for (const episode of EPISODES) {
      const starts = logs.split('\n').filter((line) => line.includes(`episode episodes/${episode} (attempt`));
      expect(starts.length, `${episode}: ${starts.join(' | ')}`).toBe(episode === staged.episode ? 2 : 1);
    }
    const killedLog = workers.get(staged.worker)!.log();
    expect(killedLog).toContain(`episode episodes/${staged.episode} (attempt`);
    // Nothing half-written is left, and every episode was finished once.
    expect(readdirSync(staging).flatMap((attempt) => readdirSync(join(staging, attempt)))).toEqual([]);
    expect(finishedEpisodes(run).sort()).toEqual([...EPISODES].sort());

    // `mass status` on the queued run counts what its records hold: both tasks' searches done, every planned episode
    // finished (the killed worker's attempt is not one more), nothing in flight or left on the workers.
    const runStatus = await runMass(['status', run, '--json']);
    expect(runStatus.code, runStatus.stderr).toBe(0);
    const said = JSON.parse(runStatus.stdout) as RunStatus;
    expect(said.run.state).toBe('finished');
    const searchGroups = said.stages
      .filter((stage) => stage.stage === 'search')
      .flatMap((stage) => stage.groups);
    expect(searchGroups.map((group) => group.label).sort()).toEqual(TASKS);
    for (const group of searchGroups) {
      expect(group.state).toBe('done');
      expect(group.kinds.find((kind) => kind.kind === 'episode')).toMatchObject({
        done: VERSIONS.length,
        planned: VERSIONS.length,
        inFlight: 0,
      });
    }
    expect(said.inFlight).toEqual({ episodes: [], calls: [], queueJobsOnWorkers: 0 });

    // The queue's own account: every job done once, none failed, the killed worker gone.
    const status = await runMass(['queue', 'status', '--redis', redis.url, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const parsed = JSON.parse(status.stdout) as QueueStatus;
    expect(parsed.endpoints).toEqual([
      expect.objectContaining({
        baseUrl: toy.baseUrl,
        waiting: 0,
        active: 0,
        completed: EPISODES.length,
        failed: 0,
        globalConcurrency: 3,
      }),
    ]);
    expect(parsed.workers.reduce((sum, worker) => sum + worker.completed, 0)).toBe(EPISODES.length);
    // The killed worker is gone from Redis's clients; the other two are still connected.
    expect(
      parsed.workers
        .filter((worker) => worker.connected)
        .map((worker) => worker.worker)
        .sort(),
    ).toEqual(['w1', 'w2', 'w3'].filter((name) => name !== staged.worker));
    // The key never reached Redis: every write is in its append-only files, the jobs' ids and variable name are.
    const written = readdirSync(join(directory.path, 'appendonlydir'))
      .map((file) => readFileSync(join(directory.path, 'appendonlydir', file), 'latin1'))
      .join('');
    expect(written).toContain(KEY_VARIABLE);
    expect(written).not.toContain(KEY);
    // Nor did the queue's secret, which reached neither Redis, the workers' logs nor the run folders.
    expect(written).toContain('hmac-sha256:');
    expect(written).not.toContain(QUEUE_SECRET);
    expect(logs).not.toContain(QUEUE_SECRET);
    expect(filesContaining(runs, QUEUE_SECRET)).toEqual([]);
  }, 900_000);
});

function startWorker(
  name: string,
  cwd: string,
  redisUrl: string,
  runs: string,
  allowed: { secretFile: string; endpoint: string },
) {
  const child = spawn(
    process.execPath,
    [
      massCli,
      'worker',
      '--redis',
      redisUrl,
      '--runs',
      runs,
      '--name',
      name,
      '--concurrency',
      '1',
      '--lock-seconds',
      '10',
      '--secret-file',
      allowed.secretFile,
      '--allow-endpoint',
      allowed.endpoint,
      '--api-key-env',
      KEY_VARIABLE,
    ],
    // A process group of its own: SIGKILL takes the worker and everything it started, as a machine's death would.
    {
      cwd,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, [KEY_VARIABLE]: KEY },
    },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  return { child, log: () => log };
}

/** Every file under `folder` whose bytes hold `text`. */
function filesContaining(folder: string, text: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(text));
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

function finishedEpisodes(run: string): string[] {
  return EPISODES.filter((episode) => existsSync(join(run, 'episodes', episode, 'episode.json')));
}

async function until<T>(probe: () => T | undefined, timeoutMs = 600_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    try {
      value = probe();
    } catch {
      // A folder listed a moment before it was renamed: ask again.
    }
    if (value !== undefined && value !== false && value !== '') return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What the searches decided, and what their episodes left, without what varies run to run (times, tokens). */
async function outcome(run: string) {
  const tasks: Record<string, unknown> = {};
  for (const task of TASKS) tasks[task] = await searchDecisions(run, task);
  const episodes: Record<string, unknown> = {};
  for (const episode of EPISODES) {
    const dir = join(run, 'episodes', episode);
    const record = await EpisodeRecord.read(join(dir, 'episode.json'));
    episodes[episode] = {
      status: record.status,
      failure: record.failure,
      modelCalls: record.modelCalls,
      delegations: record.delegations,
      workspace: fileHashes(join(dir, 'workspace')),
    };
  }
  return { tasks, episodes };
}
