// The status summariser on hand-made run directories: a run going on (its lock held by this live process, a step and
// an episode in flight with a call open), the same run stopped (its lock left by a process that is gone), and the run
// finished (no lock, every planned step done). Every count is checked against the records written here.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { readRunRecords } from '../../src/status/read-run.js';
import { renderStatusText } from '../../src/status/render-text.js';
import { summariseRun } from '../../src/status/summarise.js';
import { openRunDatabase, type RunDatabase } from '../../src/store/database.js';
import { recordWorkPlan } from '../../src/store/work-plan.js';

const NOW = Date.parse('2026-01-01T12:10:00.000Z');
const WINDOW = 5 * 60_000;
const at = (minutes: number, seconds = 0) => new Date(NOW - minutes * 60_000 - seconds * 1000).toISOString();

let run: string;
let database: RunDatabase;

beforeEach(async () => {
  run = join(await mkdtemp(join(tmpdir(), 'mass-status-')), 'demo');
  await mkdir(run);
  database = openRunDatabase(join(run, 'mass.db'));
});
afterEach(async () => {
  database.close();
  await rm(join(run, '..'), { recursive: true, force: true });
});

function step(
  key: string,
  status: 'started' | 'done' | 'failed',
  startedAt: string,
  durationMs?: number,
  error?: string,
) {
  database
    .prepare(
      'INSERT INTO steps (key, status, attempts, started_at, finished_at, duration_ms, error) VALUES (?, ?, 1, ?, ?, ?, ?)',
    )
    .run(
      key,
      status,
      startedAt,
      durationMs === undefined ? null : new Date(Date.parse(startedAt) + durationMs).toISOString(),
      durationMs ?? null,
      error ?? null,
    );
}

/** An episode folder: `calls` proxy rows ending at the given minutes ago, each 100 tokens out; `record` finishes it. */
async function episode(id: string, calls: number[], options: { record?: string; open?: string } = {}) {
  const dir = join(run, 'episodes', id);
  await mkdir(dir, { recursive: true });
  const rows = calls.map((minutesAgo, seq) =>
    JSON.stringify({
      schemaVersion: 2,
      writer: 'w',
      seq,
      startedAt: at(minutesAgo, 2),
      endedAt: at(minutesAgo),
      durationMs: 2000,
      path: '/v1/chat/completions',
      status: 200,
      model: 'mass-toy',
      error: null,
      response: {
        kind: 'completion',
        completion: { usage: { prompt_tokens: 1000, completion_tokens: 100 } },
      },
    }),
  );
  await writeFile(join(dir, 'requests.jsonl'), rows.map((row) => `${row}\n`).join(''));
  if (options.open) {
    await writeFile(
      join(dir, 'requests-open.json'),
      JSON.stringify({
        writer: 'w',
        calls: [{ seq: calls.length, startedAt: options.open, method: 'POST', path: '/v1/chat/completions' }],
      }),
    );
  }
  if (options.record) {
    await writeFile(
      join(dir, 'episode.json'),
      JSON.stringify({
        status: options.record,
        failure: options.record === 'success' ? null : { kind: 'timeout', detail: 'ran past 600 s' },
      }),
    );
  }
}

async function lock(pid: number, acquiredAt: string) {
  await writeFile(
    join(run, 'mass.lock'),
    JSON.stringify({ pid, hostname: hostname(), token: 't', acquiredAt, command: 'mass demo' }),
  );
}

/** A search of one task planned as the search plans it (0 iterations: reference, v0, one judgment). */
async function searchHalfway() {
  await recordWorkPlan(run, 'search/L0/demo-potency', { episode: 2, proposal: 0, judge: 1, result: 1 });
  step('search/L0/demo-potency/reference/episode', 'done', at(9), 60_000);
  step('search/L0/demo-potency/v0/episode', 'started', at(8));
  await episode('L0-demo-potency-reference', [9, 8.5], { record: 'success' });
  await episode('L0-demo-potency-v0', [3, 2, 1], { open: at(0, 20) });
}

const status = async () => summariseRun(await readRunRecords(run, { nowMs: NOW, windowMs: WINDOW }), WINDOW);

describe('mass status on a run', () => {
  it('going: counts against the plan, the episode in flight with its open call and tokens, throughput, an ETA', async () => {
    await searchHalfway();
    await lock(process.pid, at(10));
    const result = await status();
    expect(result.run.state).toBe('running');
    expect(result.run.holder?.pid).toBe(process.pid);
    expect(result.generations).toEqual([{ generation: 'L0', stage: 'search', state: 'running' }]);
    const [search] = result.stages;
    expect(search!.groups[0]!.kinds).toEqual([
      { kind: 'episode', done: 1, failed: 0, inFlight: 1, planned: 2 },
      { kind: 'proposal', done: 0, failed: 0, inFlight: 0, planned: 0 },
      { kind: 'judge', done: 0, failed: 0, inFlight: 0, planned: 1 },
      { kind: 'result', done: 0, failed: 0, inFlight: 0, planned: 1 },
    ]);
    expect(result.inFlight.episodes).toEqual([
      expect.objectContaining({
        id: 'L0-demo-potency-v0',
        dir: 'episodes/L0-demo-potency-v0',
        where: 'local',
        state: 'running',
        calls: 3,
        promptTokens: 3000,
        completionTokens: 300,
        currentCall: { seq: 3, ageMs: 20_000 },
      }),
    ]);
    // Three calls ended in the last five minutes (the reference's are older), 300 tokens out.
    expect(result.throughput.endpoints).toEqual([
      {
        model: 'mass-toy',
        calls: 3,
        failedCalls: 0,
        outputTokens: 300,
        callsPerSecond: 0.01,
        outputTokensPerSecond: 1,
      },
    ]);
    // One episode left at the measured 60 s, less the 60 s the one in flight has run; judge and result unmeasured.
    expect(search!.eta.remainingMs).toBe(0);
    expect(search!.eta.basis).toContain('not counted, none measured yet: judge, result');
    expect(result.problems).toEqual([]);
    expect(renderStatusText(result)).toContain('L0-demo-potency-v0');
  });

  it('stopped: the lock of a process that is gone, the started step and the open call are no longer in flight', async () => {
    await searchHalfway();
    await lock(2 ** 22 + 12345, at(10));
    const result = await status();
    expect(result.run.state).toBe('stopped');
    expect(result.run.holder).toBeNull();
    expect(result.stages[0]!.state).toBe('stopped');
    expect(result.stages[0]!.groups[0]!.kinds[0]).toEqual({
      kind: 'episode',
      done: 1,
      failed: 0,
      inFlight: 0,
      planned: 2,
    });
    expect(result.inFlight.episodes).toEqual([
      expect.objectContaining({ id: 'L0-demo-potency-v0', state: 'stopped', currentCall: null }),
    ]);
    expect(result.problems).toEqual([
      expect.objectContaining({ kind: 'interrupted-step', what: 'search/L0/demo-potency/v0/episode' }),
    ]);
    expect(result.eta.finishesAt).toBeNull();
  });

  it('on the queue: an episode a worker writes under .staging and the job it started are in flight', async () => {
    await searchHalfway();
    await lock(process.pid, at(10));
    const staged = join(run, 'episodes', '.staging', 'gpu-box-1a2b', 'L0-demo-potency-v1');
    await mkdir(staged, { recursive: true });
    await writeFile(join(staged, 'requests.jsonl'), '');
    await mkdir(join(run, 'episodes', '.L0-demo-potency-v2.tmp'));
    const job = join(run, 'queue', 'episode.demo.0123');
    await mkdir(join(job, 'n1'), { recursive: true });
    await writeFile(
      join(job, 'issued.json'),
      JSON.stringify({
        jobId: 'episode.demo.0123',
        stepKey: 'search/L0/demo-potency/v1/episode',
        issue: { nonce: 'n1' },
      }),
    );
    await writeFile(join(job, 'n1', 'start-1'), at(1));
    const result = await status();
    expect(result.inFlight.queueJobsOnWorkers).toBe(1);
    expect(result.inFlight.episodes.map((episode) => [episode.id, episode.where, episode.dir])).toEqual([
      ['L0-demo-potency-v0', 'local', 'episodes/L0-demo-potency-v0'],
      ['L0-demo-potency-v1', 'worker', 'episodes/.staging/gpu-box-1a2b/L0-demo-potency-v1'],
    ]);
    await writeFile(join(job, 'n1', 'finished.json'), '{}');
    expect((await status()).inFlight.queueJobsOnWorkers).toBe(0);
  });

  it('finished: every planned step done, failures and outages with their reasons, ETA 0', async () => {
    await recordWorkPlan(run, 'search/L0/demo-potency', { episode: 2, proposal: 0, judge: 1, result: 1 });
    step('search/L0/demo-potency/reference/episode', 'done', at(9), 60_000);
    step('search/L0/demo-potency/v0/episode', 'done', at(8), 60_000);
    step('search/L0/demo-potency/v0/judge', 'done', at(7), 5_000);
    step('search/L0/demo-potency/result', 'done', at(6), 10);
    step(
      'evaluation/demo/judgment/L1-vs-L0/demo-potency/bare/0/toy/0',
      'failed',
      at(5),
      1_000,
      'the verdict stayed malformed',
    );
    await episode('L0-demo-potency-reference', [9], { record: 'success' });
    await episode('L0-demo-potency-v0', [8], { record: 'failure' });
    await writeFile(
      join(run, 'outages.jsonl'),
      `${JSON.stringify({ schemaVersion: 1, kind: 'lost-to-outage', at: at(8), what: 'episode L0-demo-potency-v0', error: 'HTTP 503', outageSince: at(8, 30) })}\n`,
    );
    const result = await status();
    expect(result.stages.map((stage) => [stage.stage, stage.state])).toEqual([
      ['search', 'done'],
      ['evaluation', 'failed'],
    ]);
    expect(result.run.state).toBe('stopped');
    expect(result.problems.map((problem) => [problem.kind, problem.what, problem.reason])).toEqual([
      ['outage', 'episode L0-demo-potency-v0', `HTTP 503 (server failing since ${at(8, 30)})`],
      [
        'failed-step',
        'evaluation/demo/judgment/L1-vs-L0/demo-potency/bare/0/toy/0',
        'the verdict stayed malformed',
      ],
      ['failed-episode', 'episodes/L0-demo-potency-v0', 'timeout: ran past 600 s'],
    ]);
    database.prepare("DELETE FROM steps WHERE key LIKE 'evaluation/%'").run();
    const finished = await status();
    expect(finished.run.state).toBe('finished');
    expect(finished.eta).toEqual({
      remainingMs: 0,
      finishesAt: null,
      basis: 'every planned stage has finished',
    });
    expect(finished.inFlight).toEqual({ episodes: [], calls: [], queueJobsOnWorkers: 0 });
  });
});
