import { existsSync, readFileSync } from 'node:fs';
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
import { CollectionRecord } from '../../src/records/generation-records.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { configuredModel, RunSession } from '../../src/session/run-session.js';
import { judgeTeamVersusSingle, TEAM_VS_SINGLE_FOLDER } from '../../src/students/team-versus-single.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { episodeRecord, tinySumWorkspace, verdictJson } from '../judge/support.js';
import { temporaryDirectory } from '../support/fixtures.js';

const suiteDir = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));
const SEEDS = [0, 1, 2];
/** Each judge call's tokens, as the scripted judge reports them. */
const CALL_TOKENS = 2100;

describe('budgets in mass students', () => {
  const directory = temporaryDirectory();
  const parent = join(directory.path, 'parent');
  let server: ScriptedServer;
  let task: LoadedTask;

  /** The round's team and single-agent runs of tiny-sum, one of each per seed, as the loop's collections record them. */
  async function collect(condition: 'team' | 'single-agent'): Promise<void> {
    const prefix = condition === 'team' ? 'L0-distill-tiny-sum' : 'L0-single-agent-distill-tiny-sum';
    const episodes = [];
    for (const seed of SEEDS) {
      const dir = join('episodes', `${prefix}-${seed}`);
      await tinySumWorkspace(join(parent, dir, 'workspace'));
      const record = episodeRecord(task, { episodeId: `${prefix}-${seed}`, seed });
      await EpisodeRecord.write(join(parent, dir, 'episode.json'), record);
      episodes.push({
        episodeId: `${prefix}-${seed}`,
        dir,
        seed,
        status: 'success' as const,
        reason: null,
        tampered: false,
      });
    }
    const folder = condition === 'team' ? '' : 'single-agent';
    await CollectionRecord.write(join(parent, 'distill', 'L0', 'tiny-sum', folder, 'collection.json'), {
      generation: 'L0',
      task: 'tiny-sum',
      workflowHash: null,
      ...(condition === 'team' ? {} : { condition: 'single-agent' as const }),
      episodes,
      successes: SEEDS.length,
      topUps: 0,
      enough: true,
    });
  }

  beforeAll(async () => {
    task = await loadTask(join(suiteDir, 'tiny-sum'));
    server = await startScriptedServer({
      models: ['judge-model'],
      responder: () =>
        step.reply({ content: verdictJson('A'), usage: { promptTokens: 2000, completionTokens: 100 } }),
    });
    await collect('team');
    await collect('single-agent');
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  async function judge(tokens: Record<string, unknown>) {
    const config = parseRunConfig(
      {
        name: 'default',
        suite: suiteDir,
        roles: { executor: { model: 'team-model', baseUrl: server.baseUrl } },
        budgets: { tokens },
        evaluation: {
          judges: [{ name: 'j', model: 'judge-model', baseUrl: server.baseUrl }],
          judgeSeeds: 1,
          orders: 'both',
          concurrency: { judgments: 1 },
        },
      },
      'test configuration',
    );
    // The experiment's own run, inside the parent's, as `mass students` opens it.
    const run = openRun({
      runsDirectory: join(parent, 'students'),
      name: 'default',
      configSchema: RunConfig,
      config,
    });
    const session = new RunSession(run as Run<RunConfig>, suiteDir, configuredModel(config).kind);
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    try {
      const outcome = await judgeTeamVersusSingle({
        runDirectory: parent,
        session,
        config,
        generation: 'L0',
        lengthRatio: 1.25,
      }).then(
        (figures) => ({ figures, error: null }),
        (error: unknown) => ({ figures: null, error }),
      );
      return { ...outcome, events, rows: await readSpending(run.path(SPENDING_FILE)) };
    } finally {
      unsubscribe();
      await session.close();
    }
  }

  const judgeCalls = () =>
    server.requests.filter((request) => request.path.endsWith('/chat/completions')).length;

  it('starts no judgment past a budget, and a rerun with the budget raised judges nothing twice', async () => {
    // One token: the first judgment (both orders, two calls) starts with nothing spent; the second is refused.
    const first = await judge({ stages: { students: 1 } });
    expect(first.error).toBeInstanceOf(BudgetExhaustedError);
    expect((first.error as BudgetExhaustedError).exitCode).toBe(3);
    expect((first.error as Error).message).toContain('budgets.tokens.stages.students ran out');
    expect(first.events).toEqual([
      expect.objectContaining({
        budget: 'budgets.tokens.stages.students',
        spent: 2 * CALL_TOKENS,
        stage: 'students',
        label: TEAM_VS_SINGLE_FOLDER,
        role: 'judge',
      }),
    ]);
    expect(judgeCalls()).toBe(2);
    expect(first.rows).toHaveLength(2);
    expect(first.rows.every((row) => row.stage === 'students' && row.role === 'judge')).toBe(true);

    const second = await judge({ stages: { students: 100 * CALL_TOKENS } });
    expect(second.error).toBeNull();
    expect(second.figures?.pairs).toHaveLength(SEEDS.length);
    // Three pairs, one judge and seed, both orders: six calls over the two commands, each journaled once.
    expect(judgeCalls()).toBe(2 * SEEDS.length);
    expect(second.rows).toHaveLength(2 * SEEDS.length);
    expect(second.rows.slice(0, 2)).toEqual(first.rows);
    const judgments = join(parent, 'students', 'default', TEAM_VS_SINGLE_FOLDER, 'judgments.jsonl');
    expect(existsSync(judgments)).toBe(true);
    expect(readFileSync(judgments, 'utf8').trim().split('\n')).toHaveLength(2 * SEEDS.length);
  }, 30_000);
});
