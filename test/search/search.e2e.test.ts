import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { searchTasks, type SearchSummary } from '../../src/search/search-tasks.js';
import { TaskSearchRecord, type TaskSearchResult } from '../../src/records/search-records.js';
import type { SearchProgressEvent } from '../../src/search/search-progress.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { roleCallKey, searchModel, tasksDir, withTransportFailures } from './support.js';

const sampling = { temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 2000 };

describe('search end to end: two tasks × three iterations, with faults', () => {
  const directory = temporaryDirectory();
  let server: ScriptedServer;
  let model: ReturnType<typeof searchModel>;
  let run: Run<RunConfig>;
  let summary: SearchSummary;
  const events: SearchProgressEvent[] = [];
  const byTask = (task: string): TaskSearchResult => summary.results.find((result) => result.task === task)!;

  const search = async () => {
    // tiny-sum's first optimizer call and tiny-mean's first judge call meet a server down past their retries.
    const chat = withTransportFailures(new OpenAICompatibleModel({ baseUrl: server.baseUrl }), (request) => {
      const key = roleCallKey(request);
      return key === 'optimizer tiny-sum' || key === 'judge tiny-mean' ? key : null;
    });
    return searchTasks({
      run,
      generation: 'L0',
      taskDirs: [join(tasksDir, 'tiny-sum'), join(tasksDir, 'tiny-mean')],
      concurrency: { tasks: 2, episodes: 3, judgments: 2 },
      executor: { model: 'toy', baseUrl: server.baseUrl },
      judge: { model: chat, modelName: 'toy', sampling },
      optimizer: { model: chat, modelName: 'toy', sampling },
      settings: {
        iterations: 3,
        championRule: 'paper',
        judgeMode: 'random',
        judgeRepairAttempts: 1,
        optimizerRepairAttempts: 1,
        stabiliser: { initialMaxChange: 0.8, decay: 0.5 },
        seed: 7,
        dataSeeds: { seed: 7, tasks: {} },
        episode: { timeoutSeconds: 120 },
      },
      tokenCounter: await loadTokenCounter(),
      hiddenDirectories: [run.directory],
      onProgress: (event) => events.push(event),
    });
  };

  beforeAll(async () => {
    model = searchModel({
      // tiny-mean: v0's run and v3's run meet a model error.
      failEpisode: (task, tag) => task === 'tiny-mean' && (tag === 'v0' || tag === 'v0+++'),
      // tiny-sum's second proposal is invalid even after repair; tiny-mean's first is repaired.
      invalidProposal: ({ task, attempt, proposal }) =>
        (task === 'tiny-sum' && proposal === 2) || (task === 'tiny-mean' && proposal === 1 && attempt === 1),
      // tiny-sum: the first verdict of v0 vs the reference is not JSON (repaired); v3's never is (a failed judgment).
      malformedVerdict: ({ task, a, b, attempt }) =>
        task === 'tiny-sum' &&
        ((new Set([a, b]).has('reference') && attempt === 1) || a === 'v0++' || b === 'v0++'),
    });
    server = await startScriptedServer({ responder: model.responder, models: ['toy'] });
    run = openRun({
      runsDirectory: directory.path,
      name: 'search-e2e',
      configSchema: RunConfig,
      config: {
        name: 'search-e2e',
        suite: tasksDir,
        roles: { executor: { model: 'toy', baseUrl: server.baseUrl } },
      },
    });
    summary = await search();
  }, 300_000);

  afterAll(async () => {
    run?.close();
    await server?.close();
    directory.remove();
  });

  it('completes both searches with no task failing', () => {
    expect(summary.failures).toEqual([]);
    expect(summary.results.map((result) => result.task).sort()).toEqual(['tiny-mean', 'tiny-sum']);
  });

  it('records the judge and optimizer calls lost to a server outage and redoes them: no verdict, no walkover', () => {
    expect(summary.outage).toBeNull();
    expect(summary.lostToOutages.map((lost) => lost.what).sort()).toEqual([
      'judge v1 vs reference (search/L0/tiny-mean/v1)',
      'optimizer (search/L0/tiny-sum/v1)',
    ]);
    expect(summary.lostToOutages[0]!.error).toMatch(/kept failing after 5 attempts: last status 503/);
    expect(events.filter((event) => event.kind === 'lost-to-outage')).toHaveLength(2);
    const written = readFileSync(join(run.directory, 'outages.jsonl'), 'utf8').trim().split('\n');
    expect(written).toHaveLength(2);
  });

  it('tiny-sum: v0 and v1 win, the invalid proposal costs v2, the failed judgment keeps v1', () => {
    const result = byTask('tiny-sum');
    expect(result.championHistory).toEqual([
      { version: 'v0', champion: 'v0' },
      { version: 'v1', champion: 'v1' },
      { version: 'v2', champion: 'v1' },
      { version: 'v3', champion: 'v1' },
    ]);
    expect(result).toMatchObject({ champion: 'v1', beatsReference: true, championEpisode: 'L0-tiny-sum-v1' });
    const [v0, v1, v2, v3] = result.iterations;
    expect(v0!.decision!.matches).toMatchObject([{ first: 'v0', second: 'reference', result: 'first' }]);
    expect(v1!.proposal).toMatchObject({ ok: true, basedOn: 'v0' });
    expect(v2!.proposal).toMatchObject({ ok: false, reason: 'invalid-output', basedOn: 'v1' });
    expect(v2!.episode).toBeNull();
    expect(v3!.proposal).toMatchObject({ ok: true, basedOn: 'v1' });
    expect(v3!.decision!.matches).toMatchObject([{ first: 'v3', second: 'v1', result: 'failed' }]);
    expect(result.counts).toEqual({
      episodes: 4,
      failedEpisodes: 0,
      judgments: 3,
      failedJudgments: 1,
      failedProposals: 1,
    });
    // The champion's design is the optimizer's v1, which the orchestrator saw.
    expect(JSON.stringify(result.championDesign)).toContain('[tag: v0+]');
  });

  it('tiny-mean: failed runs lose by walkover, the repaired proposal wins, the champion climbs', () => {
    const result = byTask('tiny-mean');
    expect(result.championHistory.map((entry) => entry.champion)).toEqual(['reference', 'v1', 'v2', 'v2']);
    const [v0, v1, , v3] = result.iterations;
    expect(v0!.episode).toMatchObject({ status: 'failure', reason: expect.stringMatching(/^api_error/) });
    expect(v0!.decision!.matches).toMatchObject([{ result: 'walkover', judgment: null }]);
    expect(v1!.proposal).toMatchObject({ ok: true, basedOn: 'v0' });
    expect(v3!.decision!.matches).toMatchObject([{ first: 'v3', second: 'v2', result: 'walkover' }]);
    expect(result.counts).toMatchObject({ episodes: 5, failedEpisodes: 2, judgments: 2, failedProposals: 0 });
  });

  it('records everything: designs, optimizer calls with their attempts, verdicts with prompt and raw output', async () => {
    const base = join(run.directory, 'search', 'L0');
    const written = await TaskSearchRecord.read(join(base, 'tiny-sum', 'result.json'));
    expect(written).toEqual(byTask('tiny-sum'));
    expect(existsSync(join(base, 'tiny-sum', 'v0', 'workflow.json'))).toBe(true);
    expect(existsSync(join(base, 'tiny-sum', 'v2', 'workflow.json'))).toBe(false);

    const refused = await OptimizerCallRecord.read(join(base, 'tiny-sum', 'v2', 'optimizer.json'));
    expect(refused.outcome.ok).toBe(false);
    expect(refused.outcome.attempts.map((attempt) => attempt.purpose)).toEqual(['initial', 'repair']);
    expect(refused.outcome.attempts[0]!.outcome).toMatchObject({ ok: false });
    const repaired = await OptimizerCallRecord.read(join(base, 'tiny-mean', 'v1', 'optimizer.json'));
    expect(repaired.outcome.attempts).toHaveLength(2);
    expect(repaired.outcome.ok).toBe(true);
    // At tiny-mean's v1 the reference is champion: the prompt says so, and that v0 lost to it, as the history does.
    expect(repaired.outcome.prompt.user).toContain(
      '# Best design so far (reference)\n\nThe best so far is the reference run: the bare task, solved without any workflow. No design has beaten it yet.\n\nv0 lost to it (comparison 1).',
    );
    expect(repaired.outcome.prompt.user).not.toContain('No design has been judged');
    // At tiny-sum's v2 the current design, v1, is champion.
    expect(refused.outcome.prompt.user).toContain(
      '# Best design so far\n\nThe current design (v1) is the best so far.',
    );

    const firstVerdict = await PairwiseJudgmentRecord.read(
      join(base, 'tiny-sum', 'v0', 'judgments', 'v0-vs-reference.json'),
    );
    expect(firstVerdict.status).toBe('decided');
    expect(firstVerdict.judgments[0]!.attempts.map((attempt) => attempt.parse.ok)).toEqual([false, true]);
    expect(firstVerdict.judgments[0]!.prompt.user).toContain('made-by-v0.txt');
    const failed = await PairwiseJudgmentRecord.read(
      join(base, 'tiny-sum', 'v3', 'judgments', 'v3-vs-v1.json'),
    );
    expect(failed).toMatchObject({ status: 'failed', winner: null });

    // The stabiliser's bound halves each iteration, and the optimizer was told it.
    expect(byTask('tiny-sum').iterations.map((iteration) => iteration.maxChangeFraction)).toEqual([
      null,
      0.8,
      0.4,
      0.2,
    ]);
    expect(refused.outcome.maxChangeFraction).toBe(0.4);
    expect(refused.outcome.prompt.user).toContain('40%');

    // The optimizer saw the history: its v3 prompt holds the judge's rationale of v1's win.
    const third = await OptimizerCallRecord.read(join(base, 'tiny-sum', 'v3', 'optimizer.json'));
    expect(third.outcome.prompt.user).toContain('(v0+ vs v0) the longer lineage wins');

    // Episodes live in the run, named by generation, task and version; agents never saw the run directory.
    const episode = JSON.parse(
      readFileSync(join(run.directory, 'episodes', 'L0-tiny-sum-v1', 'episode.json'), 'utf8'),
    );
    expect(episode.status).toBe('success');
    expect(
      existsSync(join(run.directory, 'episodes', 'L0-tiny-sum-v1', 'workspace', 'made-by-v0+.txt')),
    ).toBe(true);
  });

  it('reports progress: every episode started and finished, every verdict and champion', () => {
    const count = (kind: SearchProgressEvent['kind']) => events.filter((event) => event.kind === kind).length;
    expect(count('episode-started')).toBe(9);
    expect(count('episode-finished')).toBe(9);
    expect(count('judgment')).toBe(5);
    expect(count('task-finished')).toBe(2);
  });

  it('run again, does nothing: every step is done', async () => {
    const before = { ...model.counts };
    const again = await search();
    expect(model.counts).toEqual(before);
    expect(again.results).toEqual(summary.results);
    expect(run.listSteps().every((step) => step.status === 'done' && step.attempts === 1)).toBe(true);
    // Finished episodes are still reported, as found finished, so a display's counts are whole.
    const resumed = events.filter((event) => event.kind === 'episode-finished' && event.resumed);
    expect(resumed).toHaveLength(9);
  }, 60_000);
});
