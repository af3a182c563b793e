import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import {
  BudgetExhaustedError,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { readSpending, SPENDING_FILE } from '../../src/cost/spend-journal.js';
import { distillGeneration, distillSettings } from '../../src/distill/index.js';
import { TaskRankingRecord } from '../../src/records/index.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { DEFAULT_JUDGE_SAMPLING } from '../../src/judge/judge-defaults.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter, type TokenCounter } from '../../src/model/token-counter.js';
import { openRun } from '../../src/store/run-store.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { teamAndJudge } from '../distill/generation-support.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { EPISODE_TOKENS, StandInTeam } from './stand-in-team.js';

const taskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
/** The team's run with seed s leaves `results/metrics.json` with `"quality": s`, what the scripted judge compares. */
const standInTeam = (task: LoadedTask) =>
  new StandInTeam(task, async (workspace, seed) => {
    await mkdir(join(workspace, 'results'), { recursive: true });
    await writeFile(join(workspace, 'results', 'metrics.json'), JSON.stringify({ total: 10, quality: seed }));
  });

describe('budgets in the distill stage', () => {
  const directory = temporaryDirectory();
  let server: ScriptedServer;
  let task: LoadedTask;
  let script: ReturnType<typeof teamAndJudge>;
  let tokenCounter: TokenCounter;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    script = teamAndJudge(task);
    tokenCounter = await loadTokenCounter();
    server = await startScriptedServer({ responder: script.responder, models: ['team-model'] });
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  const judgeRequests = () => server.requests.filter(script.isJudgeRequest).length;

  async function distill(tokens: Record<string, unknown>, team: StandInTeam) {
    const config = parseRunConfig(
      {
        name: 'budgeted',
        suite: 'test/fixtures/tasks',
        roles: { executor: { baseUrl: server.baseUrl, model: 'team-model' } },
        budgets: { episodeTimeoutSeconds: 120, tokens },
        concurrency: { episodes: 1, judgments: 1, tasks: 1 },
        distill: { runs: 4, needed: 3, maxTopUps: 0, ringOpponents: 2, train: 2, validation: 1 },
      },
      'test configuration',
    );
    // The same run each time: a changed budget is the one change a resumed run takes without --override-config.
    const run = openRun({ runsDirectory: directory.path, name: 'budgeted', configSchema: RunConfig, config });
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    try {
      const outcome = await distillGeneration({
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
        tokenCounter,
        episodes: team,
        // The training data needs whole episode directories, which the stand-in team does not leave: the test stops
        // when the tournaments, fits and selections are done.
        onProgress: (event) => {
          if (event.kind === 'stage' && event.stage === 'dataset')
            throw new Error('stopped before the dataset');
        },
      }).then(
        (result) => ({ result, error: null }),
        (error: unknown) => ({ result: null, error }),
      );
      const steps = Object.fromEntries(
        ['collect', 'match/0', 'match/1', 'select'].map((key) => [
          key,
          run.getStep(`distill/L0/tiny-sum/${key}`)?.status,
        ]),
      );
      return { ...outcome, events, steps, rows: await readSpending(run.path(SPENDING_FILE)) };
    } finally {
      unsubscribe();
      run.close();
    }
  }

  it('stops the collection and the tournament before work past a budget, and resumes with nothing redone', async () => {
    // One token: the first episode starts with nothing spent, the second finds the stage's budget spent.
    const firstTeam = standInTeam(task);
    const first = await distill({ stages: { distill: 1 } }, firstTeam);
    expect(first.error).toBeInstanceOf(BudgetExhaustedError);
    expect((first.error as BudgetExhaustedError).exitCode).toBe(3);
    expect((first.error as Error).message).toContain('budgets.tokens.stages.distill ran out');
    expect(first.events).toEqual([
      expect.objectContaining({
        budget: 'budgets.tokens.stages.distill',
        spent: EPISODE_TOKENS,
        limit: 1,
        stage: 'distill',
        label: 'L0',
        role: 'executor',
      }),
    ]);
    expect(firstTeam.started).toEqual(['distill/L0/tiny-sum/collect/L0-distill-tiny-sum-0']);
    expect(first.rows).toMatchObject([
      { stage: 'distill', label: 'L0', role: 'executor', promptTokens: 90_000, completionTokens: 12_345 },
    ]);
    expect(judgeRequests()).toBe(0);

    // The stage's budget raised, the judge's one token: the collection finishes, one judgment is made.
    const secondTeam = standInTeam(task);
    const second = await distill({ stages: { distill: 10_000_000 }, roles: { judge: 1 } }, secondTeam);
    expect(second.error).toBeInstanceOf(BudgetExhaustedError);
    expect(second.events).toEqual([
      expect.objectContaining({ budget: 'budgets.tokens.roles.judge', stage: 'distill', role: 'judge' }),
    ]);
    expect(secondTeam.started).toHaveLength(3);
    expect(second.steps).toMatchObject({ collect: 'done', 'match/0': 'done' });
    expect(second.steps['match/1']).not.toBe('done');
    const judgedFirst = judgeRequests();
    expect(judgedFirst).toBeGreaterThan(0);
    expect(second.rows.filter((row) => row.role === 'judge')).toHaveLength(judgedFirst);

    const thirdTeam = standInTeam(task);
    const third = await distill({ stages: { distill: 10_000_000 } }, thirdTeam);
    expect((third.error as Error).message).toBe('stopped before the dataset');
    expect(third.steps.select).toBe('done');
    const ranking = await TaskRankingRecord.read(
      join(directory.path, 'budgeted', 'distill', 'L0', 'tiny-sum', 'ranking.json'),
    );
    // Four players, two opponents each: four matches.
    expect(ranking.matches.scheduled).toBe(4);
    // Every judge call belongs to one match's record: no judgment was made twice.
    let calls = 0;
    for (let index = 0; index < 4; index++) {
      const record = await PairwiseJudgmentRecord.read(
        join(directory.path, 'budgeted', 'distill', 'L0', 'tiny-sum', 'matches', `${index}.json`),
      );
      calls += record.judgments.reduce((sum, judgment) => sum + judgment.attempts.length, 0);
    }
    expect(judgeRequests()).toBe(calls);
    expect(thirdTeam.started).toEqual([]);
    const episodes = [...firstTeam.started, ...secondTeam.started];
    expect(new Set(episodes).size).toBe(4);
    const byRole = (role: string) => third.rows.filter((row) => row.role === role);
    expect(byRole('executor')).toHaveLength(4);
    expect(byRole('judge')).toHaveLength(calls);
    expect(third.rows.slice(0, second.rows.length)).toEqual(second.rows);
  }, 30_000);
});
