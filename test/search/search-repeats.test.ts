import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter, type TokenCounter } from '../../src/model/token-counter.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import type { EpisodeBackend, EpisodeRequest } from '../../src/queue/episode-backend.js';
import { noiseFigures } from '../../src/records/noise-figures.js';
import { TaskRepeatsRecord } from '../../src/records/repeat-records.js';
import { searchTasks, type SearchSummary } from '../../src/search/search-tasks.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { step } from '../../src/toy/steps.js';
import type { Workflow } from '../../src/workflow/workflow.js';
import { episodeRecord } from '../judge/support.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { lineage, searchModel, tasksDir } from './support.js';

/**
 * The reruns of `search.repeats` around a whole search, without a harness: a stand-in team leaves a workspace naming
 * its design's tag and its sampling seed, the scripted optimizer extends the design's tag (`support.ts`), and a
 * scripted judge scores each workspace by its lineage plus a seed-dependent bonus, so reruns of one design can differ.
 */
const TASK = 'tiny-sum';
const SEED = 7;
const TAG = /\[tag: ([^\]]+)\]/;
/** The step of v2's second rerun, which crashes in the resume test. */
const CRASHING = `search/L0/${TASK}/repeats/v2/2/episode`;

/** The stand-in team: `made-by-<tag>.txt` and `seed-<seed>.txt` in the workspace, and a successful record. */
class StandInTeam implements EpisodeBackend {
  readonly kind = 'local';
  readonly requests: EpisodeRequest[] = [];
  /** A step key whose first attempt throws, as a crash of the episode's machinery would. */
  crashOnce: string | null = null;

  constructor(private readonly task: LoadedTask) {}

  async run(request: EpisodeRequest) {
    this.requests.push(request);
    if (request.stepKey === this.crashOnce) {
      this.crashOnce = null;
      throw new Error(`crashed: ${request.stepKey}`);
    }
    const { workflow, seed, outDir } = request.options;
    const orchestrator = (workflow as Workflow | undefined)?.agents.find(
      (agent) => agent.kind === 'orchestrator',
    );
    const tag = workflow ? (TAG.exec(orchestrator?.instruction ?? '')?.[1] ?? 'v0') : 'reference';
    const workspace = join(outDir, 'workspace');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, `made-by-${tag}.txt`), 'stand-in\n');
    await writeFile(join(workspace, `seed-${seed}.txt`), 'stand-in\n');
    const record = episodeRecord(this.task, { episodeId: outDir.split('/').at(-1)!, seed: seed! });
    await EpisodeRecord.write(join(outDir, 'episode.json'), record);
    return { record, ran: true };
  }

  async close() {}
}

/** A workspace's points: its lineage, plus 0, 0.75 or 1.5 by its seed and lineage. */
function points(workspace: string): number {
  const level = lineage(/made-by-([\w+.-]+)\.txt/.exec(workspace)?.[1] ?? 'none');
  const seed = Number(/seed-(\d+)\.txt/.exec(workspace)?.[1] ?? 0);
  return level + ((level + seed) % 3) * 0.75;
}

describe('search repeats around a search (stand-in team, scripted judge and optimizer)', () => {
  const directory = temporaryDirectory();
  let server: ScriptedServer;
  let task: LoadedTask;
  let tokenCounter: TokenCounter;
  const judgeCalls: string[] = [];

  const search = async (run: Run<RunConfig>, team: StandInTeam, repeats: number): Promise<SearchSummary> => {
    const chat = new OpenAICompatibleModel({ baseUrl: server.baseUrl });
    const sampling = { temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 2000 };
    return searchTasks({
      run,
      generation: 'L0',
      taskDirs: [task.dir],
      concurrency: { tasks: 1, episodes: 3, judgments: 2 },
      executor: { model: 'toy', baseUrl: server.baseUrl },
      judge: { model: chat, modelName: 'toy', sampling },
      optimizer: { model: chat, modelName: 'toy', sampling },
      settings: {
        iterations: 2,
        championRule: 'paper',
        judgeMode: 'random',
        judgeRepairAttempts: 1,
        optimizerRepairAttempts: 1,
        repeats,
        seed: SEED,
        dataSeeds: { seed: SEED, tasks: {} },
        episode: { timeoutSeconds: 60 },
      },
      tokenCounter,
      episodes: team,
    });
  };
  const open = (name: string) =>
    openRun({
      runsDirectory: directory.path,
      name,
      configSchema: RunConfig,
      config: {
        name,
        suite: tasksDir,
        roles: { executor: { model: 'toy', baseUrl: 'http://127.0.0.1:9/v1' } },
      },
    });
  const base = (run: Run<RunConfig>) => join(run.directory, 'search', 'L0', TASK);

  beforeAll(async () => {
    task = await loadTask(join(tasksDir, TASK));
    tokenCounter = await loadTokenCounter();
    const { responder } = searchModel();
    server = await startScriptedServer({
      models: ['toy'],
      responder: (request) => {
        const user = JSON.stringify(request.body);
        if (!user.includes('<workspace name=\\"A\\">')) return responder(request);
        const [a, b] = ['A', 'B'].map((name) => {
          const start = user.indexOf(`<workspace name=\\"${name}\\">`);
          return user.slice(start, user.indexOf('</workspace>', start));
        }) as [string, string];
        judgeCalls.push(`${points(a)} vs ${points(b)}`);
        const winner = points(a) > points(b) ? 'A' : points(a) < points(b) ? 'B' : 'tie';
        return step.text(JSON.stringify({ winner, rationale: `${points(a)} points to ${points(b)}` }));
      },
    });
  });

  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it('decides exactly as without repeats, and measures the noise of the reference and each new champion', async () => {
    const [withRun, withoutRun] = [open('with'), open('without')];
    const [withTeam, withoutTeam] = [new StandInTeam(task), new StandInTeam(task)];
    try {
      const withSummary = await search(withRun, withTeam, 2);
      const withoutSummary = await search(withoutRun, withoutTeam, 0);
      expect(withSummary.failures).toEqual([]);
      expect(withoutSummary.failures).toEqual([]);
      // Everything the loop reads: the result (champion, history, every decision), and what the optimizer was shown.
      const read = (run: Run<RunConfig>, ...path: string[]) => readFileSync(join(base(run), ...path), 'utf8');
      expect(read(withRun, 'result.json')).toBe(read(withoutRun, 'result.json'));
      for (const version of ['v1', 'v2']) {
        const prompt = async (run: Run<RunConfig>) =>
          (await OptimizerCallRecord.read(join(base(run), version, 'optimizer.json'))).outcome.prompt;
        expect(await prompt(withRun)).toEqual(await prompt(withoutRun));
      }
      const result = withSummary.results[0]!;
      expect(result.championHistory.map((entry) => entry.champion)).toEqual(['v0', 'v0', 'v2']);

      // The search's episodes sample with the seed; rerun i of every design with seed + i, under repeats/.
      const seeds = (team: StandInTeam, under: string) =>
        team.requests
          .filter((request) => request.stepKey.includes(under))
          .map((request) => request.options.seed);
      expect(seeds(withTeam, '/repeats/')).toHaveLength(6);
      expect(new Set(seeds(withTeam, '/repeats/'))).toEqual(new Set([SEED + 1, SEED + 2]));
      expect(withTeam.requests.length - 6).toBe(withoutTeam.requests.length);
      expect(new Set(withoutTeam.requests.map((request) => request.options.seed))).toEqual(new Set([SEED]));

      const repeats = await TaskRepeatsRecord.read(join(base(withRun), 'repeats.json'));
      expect(repeats.designs).toEqual(['reference', 'v0', 'v2']);
      expect(repeats.runs.map((run) => run.label)).toEqual([
        'reference-r1',
        'reference-r2',
        'v0-r1',
        'v0-r2',
        'v2-r1',
        'v2-r2',
      ]);
      expect(
        repeats.selfComparisons.map((comparison) => [comparison.match.first, comparison.match.second]),
      ).toEqual([
        ['reference-r1', 'reference'],
        ['reference-r2', 'reference'],
        ['reference-r2', 'reference-r1'],
        ['v0-r1', 'v0'],
        ['v0-r2', 'v0'],
        ['v0-r2', 'v0-r1'],
        ['v2-r1', 'v2'],
        ['v2-r2', 'v2'],
        ['v2-r2', 'v2-r1'],
      ]);
      expect(
        repeats.promotions.map((promotion) => [
          promotion.version,
          promotion.championBefore,
          promotion.replays.map((replay) =>
            replay.matches.map((match) => `${match.first} vs ${match.second}`),
          ),
        ]),
      ).toEqual([
        ['v0', 'reference', [['v0-r1 vs reference-r1'], ['v0-r2 vs reference-r2']]],
        ['v2', 'v0', [['v2-r1 vs v0-r1'], ['v2-r2 vs v0-r2']]],
      ]);
      // By the judge's rule (points: lineage + 0.75 · ((lineage + seed) mod 3)): the reference scores 0.75, 1.5
      // and 0 with seeds 7, 8, 9, so only reference-r1 beats an earlier run of it; v0 scores 2.5, 1, 1.75 (v0-r2
      // beats v0-r1), v2 (lineage 3) 3.75, 4.5, 3 (v2-r1 beats v2): 3 spurious promotions in 9.
      expect(repeats.figures.spuriousPromotions).toMatchObject({ count: 3, of: 9 });
      // v0 over the reference: won (2.5 to 0.75), lost (1 to 1.5), won (1.75 to 0); v2 over v0: won three times.
      expect(repeats.figures.promotionsRepeated).toMatchObject({ count: 3, of: 4 });
      expect(repeats.figures.verdictFlips).toMatchObject({ count: 2, of: 6 });
      expect(repeats.figures).toEqual(noiseFigures(repeats));
    } finally {
      withRun.close();
      withoutRun.close();
    }
  });

  it('measures a search finished without repeats from the decisions it recorded, changing none of them', async () => {
    const run = open('later');
    try {
      await search(run, new StandInTeam(task), 0);
      const result = readFileSync(join(base(run), 'result.json'), 'utf8');
      const team = new StandInTeam(task);
      expect((await search(run, team, 2)).failures).toEqual([]);
      // The search's own steps are done: only the reruns run.
      expect(team.requests).toHaveLength(6);
      expect(team.requests.every((request) => request.stepKey.includes('/repeats/'))).toBe(true);
      expect(readFileSync(join(base(run), 'result.json'), 'utf8')).toBe(result);
      const repeats = await TaskRepeatsRecord.read(join(base(run), 'repeats.json'));
      expect(repeats.figures.spuriousPromotions).toMatchObject({ count: 3, of: 9 });
    } finally {
      run.close();
    }
  });

  it('a search stopped by a failed rerun resumes it without redoing the finished ones', async () => {
    const run = open('resumed');
    const crashing = new StandInTeam(task);
    crashing.crashOnce = CRASHING;
    try {
      const stopped = await search(run, crashing, 2);
      expect(stopped.failures).toEqual([{ taskDir: task.dir, error: expect.stringMatching(/crashed/) }]);
      // The search itself finished and decided; only its noise is missing.
      expect(readFileSync(join(base(run), 'result.json'), 'utf8')).toContain('"champion": "v2"');
      expect(() => readFileSync(join(base(run), 'repeats.json'))).toThrow();

      const stepsOf = () =>
        new Map(
          run.listSteps({ prefix: `search/L0/${TASK}/repeats/` }).map((record) => [record.key, record]),
        );
      const before = stepsOf();
      expect(before.get(CRASHING)?.status).toBe('failed');
      const resuming = new StandInTeam(task);
      const judgedBefore = judgeCalls.length;
      const resumed = await search(run, resuming, 2);
      expect(resumed.failures).toEqual([]);
      // Only the crashed rerun runs again, and only the judgments not made before: every finished step is kept.
      expect(resuming.requests.map((request) => request.stepKey)).toEqual([CRASHING]);
      const after = stepsOf();
      const finished = [...before.values()].filter((record) => record.status === 'done');
      expect(finished.length).toBeGreaterThan(0);
      for (const record of finished) expect(after.get(record.key)).toEqual(record);
      expect(after.get(CRASHING)).toMatchObject({ status: 'done', attempts: 2 });
      // 6 reruns, 9 comparisons of runs of one design, 4 replays of a champion change: each its own step.
      expect([...after.values()].map((record) => record.status)).toEqual(Array(19).fill('done'));
      const judgedAfterResume = [...after.keys()].filter(
        (key) => !key.endsWith('/episode') && before.get(key)?.status !== 'done',
      );
      expect(judgeCalls.length - judgedBefore).toBe(judgedAfterResume.length);
      const repeats = await TaskRepeatsRecord.read(join(base(run), 'repeats.json'));
      expect(repeats.runs).toHaveLength(6);
      expect(repeats.figures.spuriousPromotions).toMatchObject({ count: 3, of: 9 });
    } finally {
      run.close();
    }
  });
});
