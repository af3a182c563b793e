import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import {
  distillGeneration,
  distillSettings,
  type DistillGenerationOptions,
  type DistillGenerationResult,
} from '../../src/distill/index.js';
import { TaskRankingRecord, type DistillProgressEvent } from '../../src/records/index.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { DEFAULT_JUDGE_SAMPLING } from '../../src/judge/judge-defaults.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { episodeId, FAILING_SEED, jsonLines, openGenerationRun, teamAndJudge } from './generation-support.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
const directory = temporaryDirectory();
let server: ScriptedServer;
let task: LoadedTask;
let script: ReturnType<typeof teamAndJudge>;

beforeAll(async () => {
  task = await loadTask(taskDir);
  script = teamAndJudge(task);
  server = await startScriptedServer({ responder: script.responder, models: ['team-model'] });
});
afterAll(async () => {
  await server.close();
  directory.remove();
});

async function generationOptions(
  run: ReturnType<typeof openGenerationRun>,
  onProgress?: (event: DistillProgressEvent) => void,
): Promise<DistillGenerationOptions> {
  return {
    run,
    generation: 'L0',
    tasks: [{ taskDir, championWorkflow: task.manifest.workflow }],
    executor: { model: 'team-model', baseUrl: server.baseUrl },
    judge: {
      model: new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } }),
      modelName: 'team-model',
      sampling: { ...DEFAULT_JUDGE_SAMPLING },
    },
    settings: distillSettings(run.config),
    tokenCounter: await loadTokenCounter(),
    onProgress,
  };
}

function countRequests(from: number) {
  const requests = server.requests.slice(from);
  const judge = requests.filter(script.isJudgeRequest).length;
  return { judge, team: requests.length - judge };
}

const low = episodeId(0);
const middle = episodeId(1);
const high = episodeId(3);
const failed = episodeId(FAILING_SEED);

describe('one generation of the outer loop, for one task', () => {
  let run: ReturnType<typeof openGenerationRun>;
  let result: DistillGenerationResult;
  let unusablePair: number;

  beforeAll(() => {
    run = openGenerationRun(directory.path, 'generation', server.baseUrl);
  });
  afterAll(() => run.close());

  it('stops when interrupted mid-tournament, and resumes without judging a finished match again', async () => {
    const interrupted = await generationOptions(run, (event) => {
      if (event.kind === 'judgments' && event.done === 1) throw new Error('stopped by the test');
    });
    await expect(distillGeneration(interrupted)).rejects.toThrow('stopped by the test');
    expect(script.teamProblems()).toEqual([]);
    expect(run.getStep('distill/L0/tiny-sum/collect')).toMatchObject({ status: 'done' });
    expect(run.getStep('distill/L0/tiny-sum/match/0')).toMatchObject({ status: 'done', attempts: 1 });
    expect(run.getStep('distill/L0/tiny-sum/match/1')).toBeUndefined();

    const before = server.requests.length;
    const events: DistillProgressEvent[] = [];
    result = await distillGeneration(await generationOptions(run, (event) => void events.push(event)));
    unusablePair = result.perTask[0]!.matches.findIndex((match) => match.status === 'failed');
    // Matches 1 and 2 only: one call for a decided pair, two (a repair) for the unusable one.
    const expectedJudgeCalls = [1, 2].reduce((sum, index) => sum + (index === unusablePair ? 2 : 1), 0);
    expect(countRequests(before)).toEqual({ judge: expectedJudgeCalls, team: 0 });
    expect(run.getStep('distill/L0/tiny-sum/match/0')).toMatchObject({ status: 'done', attempts: 1 });
    expect(events.filter((event) => event.kind === 'judgments').map((event) => event.done)).toEqual([
      0, 1, 2, 3,
    ]);
    expect(events.filter((event) => event.kind === 'stage').map((event) => event.stage)).toEqual([
      'collect',
      'tournament',
      'fit',
      'select',
      'dataset',
    ]);
  }, 90_000);

  it('collects the runs, and leaves the failed one out of the tournament', () => {
    const { collection, ranking, matches } = result.perTask[0]!;
    expect(collection.episodes.map((episode) => [episode.episodeId, episode.status])).toEqual([
      [low, 'success'],
      [middle, 'success'],
      [failed, 'failure'],
      [high, 'success'],
    ]);
    expect(collection).toMatchObject({ successes: 3, topUps: 0, enough: true });
    expect(ranking.players).toEqual([low, middle, high]);
    expect(ranking.excluded).toEqual([{ episodeId: failed, reason: 'failed', detail: expect.any(String) }]);
    expect(matches.flatMap((match) => [match.x, match.y])).not.toContain(failed);
    // Three players, two opponents each: every pair once.
    expect(matches).toHaveLength(3);
  });

  it('records the unusable judgment as failed and fits the decided matches only', async () => {
    const { matches, ranking } = result.perTask[0]!;
    const unusable = matches[unusablePair]!;
    expect([unusable.x, unusable.y].sort()).toEqual([low, high]);
    expect(unusable).toMatchObject({ status: 'failed', winner: null });
    const record = await PairwiseJudgmentRecord.read(run.path(unusable.judgment));
    expect(record.status).toBe('failed');
    expect(record.judgments[0]!.attempts).toHaveLength(2);
    expect(ranking.matches).toEqual({ scheduled: 3, decided: 2, failed: [unusablePair] });
    expect(jsonLines(run.path('distill/L0/tiny-sum/matches.jsonl'))).toHaveLength(2);
  });

  it('ranks by the judge’s preferences, and the files agree with the result', async () => {
    const { matches, ranking, selection } = result.perTask[0]!;
    for (const match of matches.filter((outcome) => outcome.status === 'decided')) {
      const record = await PairwiseJudgmentRecord.read(
        run.path('distill/L0/tiny-sum/matches', `${match.index}.json`),
      );
      expect(record.winner).toBe(match.winner);
      const winner = match.winner === 'x' ? match.x : match.y;
      expect(winner).toBe([match.x, match.y].includes(high) ? high : middle);
    }
    expect(ranking.ranking).toEqual([high, middle, low]);
    expect(ranking.records[high]).toEqual({ wins: 1, ties: 0, losses: 0 });
    expect(await TaskRankingRecord.read(run.path('distill/L0/tiny-sum/ranking.json'))).toEqual(ranking);
    expect(selection).toMatchObject({ train: [high, middle], validation: [low], short: 0 });
    expect(selection.decisions).toContainEqual({ episodeId: failed, rank: null, reason: 'failed' });
    expect(JSON.parse(readFileSync(run.path('distill/L0/tiny-sum/selection.json'), 'utf8'))).toEqual(
      selection,
    );
  });

  it('builds train and validation windows from exactly the selected episodes, the workflow removed', () => {
    const { dataset } = result;
    expect(dataset.path).toBe(run.path('distill/L0/dataset'));
    expect(dataset.stats.splits.train.episodes).toBe(2);
    expect(dataset.stats.splits.validation.episodes).toBe(1);
    const episodesOf = (split: string) =>
      new Set(
        jsonLines(join(dataset.path, `${split}.index.jsonl`)).map(
          (row) => (row as { episode: string }).episode,
        ),
      );
    expect(episodesOf('train')).toEqual(new Set([high, middle]));
    expect(episodesOf('validation')).toEqual(new Set([low]));
    const roles = new Set(
      jsonLines(join(dataset.path, 'train.index.jsonl')).map((row) => (row as { role: string }).role),
    );
    expect(roles).toEqual(new Set(['orchestrator', 'subagent']));
    const conversations = readFileSync(join(dataset.path, 'train.conversations.jsonl'), 'utf8');
    expect(conversations).toContain('Sum a column');
    expect(conversations).not.toContain('## Team workflow');
  });

  it('makes no model call when run again after completion, and returns the same result', async () => {
    const before = server.requests.length;
    const again = await distillGeneration(await generationOptions(run));
    expect(server.requests.length).toBe(before);
    expect(again).toEqual(result);
  });
});

describe('the adaptive schedule with both judge orders', () => {
  it('adds rounds across the selection cut, judges each pair in both orders, and ranks the same', async () => {
    // The first run's episodes, copied: finished episode directories are not run again.
    cpSync(join(directory.path, 'generation', 'episodes'), join(directory.path, 'adaptive', 'episodes'), {
      recursive: true,
    });
    const run = openGenerationRun(directory.path, 'adaptive', server.baseUrl, {
      schedule: 'adaptive',
      judgeMode: 'both',
      adaptive: { initialOpponents: 2, rounds: 2, batchSize: 2 },
    });
    try {
      const before = server.requests.length;
      const result = await distillGeneration(await generationOptions(run));
      expect(countRequests(before).team).toBe(0);
      const { matches, ranking, selection } = result.perTask[0]!;
      expect(run.getStep('distill/L0/tiny-sum/schedule/1')).toMatchObject({ status: 'done' });
      const later = matches.filter((match) => match.round > 0);
      expect(later.length).toBeGreaterThan(0);
      // Only the pairs across the train/validation cut (ranks 1–2 against rank 3) are judged again.
      for (const match of later) expect([match.x, match.y]).toContain(low);
      // The pair the judge cannot decide is tried no more than the meeting limit (2), failed or not.
      expect(
        matches.filter((match) => [low, high].every((id) => [match.x, match.y].includes(id))),
      ).toHaveLength(2);
      // Both orders per judgment, each unusable reply repaired once: 2 + 2 + 4 in the first round, 2 + 4 in the next.
      expect(countRequests(before).judge).toBe(14);
      for (const match of matches) {
        const record = await PairwiseJudgmentRecord.read(run.path(match.judgment));
        expect(record.judgments.map((judgment) => judgment.shownAsA)).toEqual(['x', 'y']);
        expect(match.shownFirst).toBeNull();
      }
      expect(ranking.ranking).toEqual([high, middle, low]);
      expect(selection).toMatchObject({ train: [high, middle], validation: [low] });
      expect(existsSync(join(result.dataset.path, 'stats.json'))).toBe(true);
    } finally {
      run.close();
    }
  }, 60_000);
});

describe('the distill configuration', () => {
  it('has the paper’s defaults', () => {
    const config = parseRunConfig(
      { name: 'n', suite: 's', roles: { executor: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } } },
      'config.yaml',
    );
    const settings = distillSettings(config);
    expect(settings).toMatchObject({
      collection: { runs: 18, needed: 16, maxTopUps: 6 },
      schedule: { kind: 'ring', ringOpponents: 6 },
      judge: { mode: 'random', repairAttempts: 2 },
      prior: 0.5,
      selection: { train: 15, validation: 1 },
      windows: { windowTokens: 49_152, maxContextTokens: 8_192 },
      seed: 0,
      episode: { timeoutSeconds: 3600, maxOutputTokens: 32_768, sandbox: 'bubblewrap' },
    });
  });
});
