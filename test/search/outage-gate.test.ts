import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { apiErrorCause } from '../../src/episode/outcome.js';
import { finalError, isTransportFailure } from '../../src/model/retry.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import {
  OutageBudgetSpentError,
  OutageGate,
  runEpisodeThroughOutages,
} from '../../src/search/outage-gate.js';
import { temporaryDirectory } from '../support/fixtures.js';

/** A probe that says the server is down until `up()` is called. */
function switchableProbe() {
  let isUp = false;
  let probes = 0;
  return {
    probe: async () => {
      probes++;
      return isUp;
    },
    up: () => (isUp = true),
    get probes() {
      return probes;
    },
  };
}

describe('outage gate', () => {
  it('holds lost work and new work until the server answers again, with one wait for the whole outage', async () => {
    const directory = temporaryDirectory();
    const server = switchableProbe();
    const gate = new OutageGate({
      probe: server.probe,
      budgetMs: 10_000,
      probeIntervalMs: 20,
      server: 'http://model:8000/v1',
      logFile: join(directory.path, 'outages.jsonl'),
    });
    const order: string[] = [];
    const lostA = gate.lostToOutage('episode a', 'api_error: 503').then(() => order.push('a redone'));
    const lostB = gate.lostToOutage('judge b', 'kept failing').then(() => order.push('b redone'));
    const fresh = gate.ready().then(() => order.push('new work'));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(order).toEqual([]);
    const probesWhileDown = server.probes;
    // One wait shared by both losses: about one probe per interval, not two.
    expect(probesWhileDown).toBeLessThanOrEqual(10);
    server.up();
    await Promise.all([lostA, lostB, fresh]);
    expect(order.sort()).toEqual(['a redone', 'b redone', 'new work']);
    gate.succeeded();
    await gate.close();
    const rows = readFileSync(join(directory.path, 'outages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { what: string; outageSince: string });
    expect(rows.map((row) => row.what)).toEqual(['episode a', 'judge b']);
    expect(rows[1]!.outageSince).toBe(rows[0]!.outageSince);
    directory.remove();
  });

  it('stops everyone once an outage lasts past its budget, saying how to resume', async () => {
    const gate = new OutageGate({
      probe: async () => false,
      budgetMs: 200,
      probeIntervalMs: 20,
      server: 'http://model:8000/v1',
    });
    const lost = gate.lostToOutage('episode a', '503');
    await expect(lost).rejects.toBeInstanceOf(OutageBudgetSpentError);
    await expect(lost).rejects.toThrow(
      /past the outage budget of 0.2 s .* run the same command again to resume/,
    );
    await expect(gate.ready()).rejects.toBeInstanceOf(OutageBudgetSpentError);
    await expect(gate.lostToOutage('judge b', '503')).rejects.toBeInstanceOf(OutageBudgetSpentError);
    expect(new OutageBudgetSpentError('x').exitCode).toBe(3);
  });

  it('counts a flapping server as one outage until some work goes through', async () => {
    let calls = 0;
    const gate = new OutageGate({
      // The server says it is up, yet the work keeps failing.
      probe: async () => true,
      budgetMs: 250,
      probeIntervalMs: 10,
      server: 'http://model:8000/v1',
    });
    const redo = async (): Promise<void> => {
      for (;;) {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 60));
        await gate.lostToOutage('episode a', '503');
      }
    };
    await expect(redo()).rejects.toBeInstanceOf(OutageBudgetSpentError);
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(8);
  });
});

describe('what counts as an outage', () => {
  it('a call whose server kept failing past its retries, not a refused request or a bad answer', () => {
    const context = { endpoint: 'openai-compatible http://model:8000/v1', model: 'm' };
    const statusFailure = (status: number) =>
      finalError({ kind: 'status', status, message: 'x', retryAfterMs: null }, 5, context);
    expect(isTransportFailure(statusFailure(503))).toBe(true);
    expect(isTransportFailure(statusFailure(429))).toBe(true);
    expect(
      isTransportFailure(finalError({ kind: 'connection', code: 'ECONNREFUSED', message: 'x' }, 5, context)),
    ).toBe(true);
    expect(isTransportFailure(finalError({ kind: 'timeout', message: 'x' }, 5, context))).toBe(true);
    expect(isTransportFailure(statusFailure(400))).toBe(false);
    expect(isTransportFailure(statusFailure(404))).toBe(false);
    expect(
      isTransportFailure(finalError({ kind: 'connection', code: 'ENOTFOUND', message: 'x' }, 1, context)),
    ).toBe(false);
    expect(
      isTransportFailure(finalError({ kind: 'model-behaviour', message: 'no choices' }, 1, context)),
    ).toBe(false);
    expect(isTransportFailure(new Error('a bug'))).toBe(false);
  });

  it("an episode's failed call: the server unavailable, the stream cut, or the request refused", () => {
    expect(
      apiErrorCause({ status: 503, error: 'upstream answered 503 (gave up after 40 attempts over 180.2 s)' }),
    ).toBe('server_unavailable');
    expect(
      apiErrorCause({
        status: 502,
        error: 'mass proxy: upstream http://x unreachable or failed: ECONNREFUSED',
      }),
    ).toBe('server_unavailable');
    expect(
      apiErrorCause({ status: 200, error: 'upstream dropped the connection mid-response after 900 bytes' }),
    ).toBe('stream_cut');
    expect(apiErrorCause({ status: 400, error: null })).toBe('request_refused');
    // A cut stream whose replays met a server that was gone.
    const attempt = { error: 'x', startedAfterMs: 0, durationMs: 1, delayMs: null };
    expect(
      apiErrorCause({
        status: 200,
        error: 'connect ECONNREFUSED 127.0.0.1:1 (gave up after 3 attempts over 2.1 s)',
        attempts: [
          { ...attempt, status: 200 },
          { ...attempt, status: null },
          { ...attempt, status: null },
        ],
      }),
    ).toBe('server_unavailable');
  });
});

describe('an episode run through the gate (collection)', () => {
  const lost = {
    failure: { kind: 'api_error', cause: 'server_unavailable', detail: 'HTTP 503 after 40 attempts' },
  };
  const done = { failure: null, status: 'success' };
  const asResult = (record: object) => ({ record: record as unknown as EpisodeRecord });

  it('redoes an episode lost to an outage once the server answers, from a clean directory', async () => {
    const directory = temporaryDirectory();
    const outDir = join(directory.path, 'L0-distill-task-3');
    const server = switchableProbe();
    const gate = new OutageGate({
      probe: server.probe,
      budgetMs: 10_000,
      probeIntervalMs: 20,
      server: 'http://model:8000/v1',
      logFile: join(directory.path, 'outages.jsonl'),
    });
    const leftBehind: boolean[] = [];
    let attempts = 0;
    const running = runEpisodeThroughOutages(gate, { id: 'L0-distill-task-3', outDir }, async () => {
      leftBehind.push(existsSync(join(outDir, 'half-written')));
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'half-written'), '');
      return asResult(++attempts === 1 ? lost : done);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(attempts).toBe(1);
    server.up();
    const result = await running;
    await gate.close();
    expect(result.record).toEqual(done);
    expect(attempts).toBe(2);
    expect(leftBehind).toEqual([false, false]);
    const rows = readFileSync(join(directory.path, 'outages.jsonl'), 'utf8').trim().split('\n');
    expect(rows.map((row) => JSON.parse(row).what)).toEqual(['episode L0-distill-task-3']);
    directory.remove();
  });

  it('keeps any other failure as the episode’s result, and stops once the outage budget is spent', async () => {
    const gate = new OutageGate({ probe: async () => false, budgetMs: 50, probeIntervalMs: 10, server: 'm' });
    const refused = { failure: { kind: 'api_error', cause: 'request_refused', detail: 'HTTP 400' } };
    const kept = await runEpisodeThroughOutages(gate, { id: 'e', outDir: '/nonexistent/e' }, async () =>
      asResult(refused),
    );
    expect(kept.record).toEqual(refused);
    await expect(
      runEpisodeThroughOutages(gate, { id: 'e', outDir: '/nonexistent/e' }, async () => asResult(lost)),
    ).rejects.toBeInstanceOf(OutageBudgetSpentError);
    await expect(gate.ready()).rejects.toBeInstanceOf(OutageBudgetSpentError);
  });
});
