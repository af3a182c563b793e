import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { noiseFigures } from '../../src/records/noise-figures.js';
import {
  GenerationNoiseRecord,
  TaskRepeatsRecord,
  type TaskRepeats,
} from '../../src/records/repeat-records.js';
import type { SearchProgressEvent } from '../../src/search/search-progress.js';
import { searchTasks, type SearchSummary } from '../../src/search/search-tasks.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel } from '../../src/toy/index.js';
import { searchPage } from '../../src/view/pages/search-page.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { fileHashes, searchDecisions } from './search-outcome.js';

/**
 * `search.repeats: 2` on the toy model: one task, one iteration. The same search runs twice from the same seed, with
 * and without the reruns, and must decide the same; the reruns' episodes, judgments and noise figures are checked
 * against what was recorded. The toy model answers from the request's seed and the text alone, so two searches from
 * one seed decide alike. Its weights here make a team that follows its design run every check its contracts ask for
 * (so v0 can beat the bare task), and leave reports and results to chance (so reruns differ): from seed 1, v0 wins its
 * place, which gives a champion change to replay.
 */
const TASK = 'demo-potency';
const SEED = 1;
const REPEATS = 2;
const WEIGHTS = {
  ...BASE_TOY_WEIGHTS,
  delegateWithWorkflow: 1,
  runChecks: 1,
  completeReport: 0.5,
  careful: 0.5,
};

describe('search noise: a search with repeats decides as the same search without them', () => {
  const directory = temporaryDirectory();
  let server: ReplyServer;
  // Filled in beforeAll: the same search with and without repeats.
  const runs = {} as Record<'with' | 'without', Run<RunConfig>>;
  const summaries = {} as Record<'with' | 'without', SearchSummary>;
  let repeats: TaskRepeats;
  const resumedEvents: SearchProgressEvent[] = [];

  const open = (name: 'with' | 'without') =>
    openRun({
      runsDirectory: join(directory.path, 'runs'),
      name,
      configSchema: RunConfig,
      config: {
        name,
        suite: DEMO_SUITE,
        roles: { executor: { model: 'mass-toy', baseUrl: server.baseUrl } },
      },
    });
  const search = async (
    run: Run<RunConfig>,
    count: number,
    onProgress?: (event: SearchProgressEvent) => void,
  ) => {
    const chat = new OpenAICompatibleModel({ baseUrl: server.baseUrl });
    const sampling = { temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 4000 };
    return searchTasks({
      run,
      generation: 'L0',
      taskDirs: [join(DEMO_SUITE, TASK)],
      concurrency: { tasks: 1, episodes: 2, judgments: 2 },
      executor: { model: 'mass-toy', baseUrl: server.baseUrl },
      judge: { model: chat, modelName: 'mass-toy', sampling },
      optimizer: { model: chat, modelName: 'mass-toy', sampling },
      settings: {
        iterations: 1,
        championRule: 'paper',
        judgeMode: 'random',
        judgeRepairAttempts: 1,
        optimizerRepairAttempts: 1,
        repeats: count,
        seed: SEED,
        dataSeeds: { seed: SEED, tasks: {} },
        episode: { timeoutSeconds: 150 },
      },
      tokenCounter: await loadTokenCounter(),
      hiddenDirectories: [run.directory],
      onProgress,
    });
  };
  const taskBase = (name: 'with' | 'without') => join(runs[name].directory, 'search', 'L0', TASK);

  beforeAll(async () => {
    server = await startToyModel({ weights: WEIGHTS, modelName: 'mass-toy' });
    runs.with = open('with');
    runs.without = open('without');
    [summaries.with, summaries.without] = await Promise.all([
      search(runs.with, REPEATS),
      search(runs.without, 0),
    ]);
    repeats = await TaskRepeatsRecord.read(join(taskBase('with'), 'repeats.json'));
    // The same search again: every step is done, so nothing runs and the record is written alike.
    await search(runs.with, REPEATS, (event) => resumedEvents.push(event));
  }, 240_000);

  afterAll(async () => {
    runs.with?.close();
    runs.without?.close();
    await server?.close();
    directory.remove();
  });

  it('decides exactly as the same search without repeats: champions, verdicts, designs', async () => {
    expect(summaries.with.failures).toEqual([]);
    expect(summaries.without.failures).toEqual([]);
    expect(await searchDecisions(runs.with.directory, TASK)).toEqual(
      await searchDecisions(runs.without.directory, TASK),
    );
    const designs = (name: 'with' | 'without') =>
      Object.entries(fileHashes(taskBase(name))).filter(([file]) => file.endsWith('workflow.json'));
    expect(designs('with')).toEqual(designs('without'));
    // What the loop reads of a search names no rerun.
    expect(readFileSync(join(taskBase('with'), 'result.json'), 'utf8')).not.toMatch(/-r\d/);
    expect(existsSync(join(taskBase('without'), 'repeats.json'))).toBe(false);
  });

  it('reruns the reference and every new champion twice, each rerun with its own seed', async () => {
    const result = summaries.with.results[0]!;
    const promoted = result.iterations.filter((iteration) => iteration.decision?.promoted);
    expect(promoted.map((iteration) => iteration.version)).toContain('v0');
    expect(repeats.designs).toEqual(['reference', ...promoted.map((iteration) => iteration.version)]);
    expect(repeats.runs).toHaveLength(REPEATS * repeats.designs.length);
    for (const rerun of repeats.runs) {
      expect(rerun.label).toBe(`${rerun.design}-r${rerun.index}`);
      expect(rerun.episode.episodeId).toBe(`L0-${TASK}-${rerun.label}`);
      const record = await EpisodeRecord.read(join(runs.with.directory, rerun.episode.dir, 'episode.json'));
      // Rerun i of every design samples with seed + i: never the search's own seed.
      expect(record.seed).toBe(SEED + rerun.index);
      expect(rerun.seed).toBe(record.seed);
    }
    const own = await EpisodeRecord.read(join(runs.with.directory, result.reference.dir, 'episode.json'));
    expect(own.seed).toBe(SEED);
  });

  it('judges every two runs of a design and replays each promotion on the reruns, all recorded', async () => {
    // k + 1 = 3 runs per design: 3 pairs each.
    expect(repeats.selfComparisons).toHaveLength(3 * repeats.designs.length);
    expect(repeats.promotions.map((promotion) => promotion.version)).toEqual(repeats.designs.slice(1));
    for (const promotion of repeats.promotions) {
      expect(promotion.original.at(-1)?.result).toBe('first');
      expect(promotion.replays.map((replay) => replay.index)).toEqual([1, 2]);
      for (const replay of promotion.replays) {
        expect(replay.matches[0]).toMatchObject({
          first: `${promotion.version}-r${replay.index}`,
          second: `${promotion.championBefore}-r${replay.index}`,
        });
      }
    }
    // Each match's result is the verdict recorded in its judgment file (a walkover has none).
    const matches = [
      ...repeats.selfComparisons.map((comparison) => comparison.match),
      ...repeats.promotions.flatMap((promotion) => promotion.replays.flatMap((replay) => replay.matches)),
    ];
    for (const match of matches) {
      if (match.result === 'walkover') {
        expect(match.judgment).toBeNull();
        continue;
      }
      const judgment = await PairwiseJudgmentRecord.read(join(runs.with.directory, match.judgment!));
      expect(match.judgment).toBe(
        `search/L0/${TASK}/repeats/judgments/${match.first}-vs-${match.second}.json`,
      );
      expect([judgment.x.label, judgment.y.label]).toEqual([match.first, match.second]);
      const recorded = { x: 'first', y: 'second', tie: 'tie' }[judgment.winner ?? 'tie'];
      expect(match.result).toBe(judgment.status === 'failed' ? 'failed' : recorded);
    }
  });

  it('counts the noise figures from the recorded judgments, per task and pooled over the generation', async () => {
    expect(repeats.figures).toEqual(noiseFigures(repeats));
    const spurious = repeats.selfComparisons.filter((comparison) => comparison.match.result === 'first');
    expect(repeats.figures.spuriousPromotions).toMatchObject({
      count: spurious.length,
      of: repeats.selfComparisons.filter((comparison) => comparison.match.result !== 'failed').length,
    });
    // Per promotion: verdicts at run 0, 1 and 2 give 3 pairs each.
    expect(repeats.figures.verdictFlips.of).toBe(3 * repeats.promotions.length);
    const noise = await GenerationNoiseRecord.read(join(runs.with.directory, 'search', 'L0', 'noise.json'));
    expect(noise.tasks).toEqual([{ task: TASK, repeats: REPEATS, figures: repeats.figures }]);
    expect(noise.figures).toEqual(repeats.figures);
  });

  it('resumes without redoing a finished rerun, and the viewer shows the reruns', async () => {
    expect(resumedEvents.filter((event) => event.kind === 'episode-started')).toEqual([]);
    expect(await TaskRepeatsRecord.read(join(taskBase('with'), 'repeats.json'))).toEqual(repeats);
    const html = await searchPage(runs.with.directory, 'L0', TASK);
    expect(html).toContain('Search noise');
    expect(html).toContain(`/episodes/L0-${TASK}-reference-r1/`);
  });
});
