import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  BudgetExhaustedError,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { readSpending, SPENDING_FILE, type SpendRow } from '../../src/cost/spend-journal.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter, type TokenCounter } from '../../src/model/token-counter.js';
import type { EpisodeBackend, EpisodeRequest } from '../../src/queue/episode-backend.js';
import { TaskSearchRecord } from '../../src/records/search-records.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel } from '../../src/toy/index.js';
import type { Workflow } from '../../src/workflow/workflow.js';
import { episodeRecord } from '../judge/support.js';
import { openSearchRun, searchOneEndpoint } from '../search/one-endpoint-search.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));
const ITERATIONS = 2;

/** A team that writes the deliverables and an episode record whose team spent 102,345 tokens (episodeRecord's). */
class StandInTeam implements EpisodeBackend {
  readonly kind = 'local';
  readonly started: string[] = [];
  constructor(private readonly task: LoadedTask) {}

  async run(request: EpisodeRequest) {
    const { outDir, seed } = request.options;
    this.started.push(request.stepKey);
    const workspace = join(outDir, 'workspace');
    await mkdir(workspace, { recursive: true });
    const withEc50 = (request.options.workflow as Workflow | undefined) !== undefined;
    await writeFile(
      join(workspace, 'results.json'),
      JSON.stringify(withEc50 ? { ec50_uM: 5.91, hill_slope: 1.78 } : { hill_slope: 1.78 }),
    );
    await writeFile(join(workspace, 'report.md'), '# Potency\n\n## Summary\n\nA Hill fit over every well.\n');
    const record = episodeRecord(this.task, { episodeId: outDir.split('/').at(-1)!, seed: seed! });
    await EpisodeRecord.write(join(outDir, 'episode.json'), record);
    return { record, ran: true };
  }

  async close() {}
}

const tokensOf = (row: SpendRow) => row.promptTokens + row.completionTokens;

describe('a budget that runs out mid-search', () => {
  const directory = temporaryDirectory();
  let server: ReplyServer;
  let task: LoadedTask;
  let tokenCounter: TokenCounter;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    tokenCounter = await loadTokenCounter();
    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy', seed: 1 });
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  async function search(searchTokens: number, team: StandInTeam) {
    const run = openSearchRun({
      runsDirectory: directory.path,
      name: 'budgeted',
      suite: join(taskDir, '..'),
      model: 'mass-toy',
      baseUrl: server.baseUrl,
      config: { budgets: { tokens: { stages: { search: searchTokens } } } },
    });
    try {
      const outcome = await searchOneEndpoint({
        run,
        baseUrl: server.baseUrl,
        model: 'mass-toy',
        chat: new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } }),
        taskDirs: [taskDir],
        concurrency: { tasks: 1, episodes: 2, judgments: 1 },
        settings: {
          iterations: ITERATIONS,
          championRule: 'official',
          judgeRepairAttempts: 0,
          optimizerRepairAttempts: 0,
          seed: 3,
          timeoutSeconds: 60,
        },
        tokenCounter,
        episodes: team,
        budgets: run.config.budgets,
      }).then(
        (summary) => ({ summary, error: null }),
        (error: unknown) => ({ summary: null, error }),
      );
      return { ...outcome, rows: await readSpending(run.path(SPENDING_FILE)), directory: run.directory };
    } finally {
      run.close();
    }
  }

  it('stops before the first piece of work past it, and a rerun with a raised budget redoes nothing', async () => {
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    // The reference's and v0's episodes (2 × 102,345 tokens) leave one token: v0's judgment starts and spends it;
    // v1's proposal, the next piece of work, is not started.
    const limit = 2 * 102_345 + 1;
    const firstTeam = new StandInTeam(task);
    let first;
    try {
      first = await search(limit, firstTeam);
    } finally {
      unsubscribe();
    }
    expect(first.error).toBeInstanceOf(BudgetExhaustedError);
    expect((first.error as BudgetExhaustedError).exitCode).toBe(3);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      budget: 'budgets.tokens.stages.search',
      unit: 'tokens',
      limit,
      stage: 'search',
      label: 'L0',
      role: 'optimizer',
    });
    expect(first.rows.map((row) => row.role).sort()).toEqual(['executor', 'executor', 'judge']);
    const spent = first.rows.reduce((sum, row) => sum + tokensOf(row), 0);
    expect(events[0]!.spent).toBe(spent);
    expect(spent).toBeGreaterThanOrEqual(limit);
    // Every recorded piece of work started under the budget: without the last row, it was not spent.
    expect(spent - tokensOf(first.rows.at(-1)!)).toBeLessThan(limit);
    expect(firstTeam.started).toHaveLength(2);
    expect(first.error instanceof Error && first.error.message).toContain('budgets.tokens.stages.search');

    const secondTeam = new StandInTeam(task);
    const second = await search(100 * limit, secondTeam);
    expect(second.error).toBeNull();
    expect(second.summary?.failures).toEqual([]);
    const result = await TaskSearchRecord.read(
      join(second.directory, 'search', 'L0', 'demo-potency', 'result.json'),
    );
    // Nothing made twice: each episode ran in one of the two commands, each judgment and proposal was one call.
    const episodes = [...firstTeam.started, ...secondTeam.started];
    expect(new Set(episodes).size).toBe(episodes.length);
    expect(episodes).toHaveLength(ITERATIONS + 2);
    const byRole = (role: string) => second.rows.filter((row) => row.role === role);
    expect(byRole('executor')).toHaveLength(ITERATIONS + 2);
    const matches = result.iterations.flatMap((iteration) => iteration.decision?.matches ?? []);
    expect(byRole('judge')).toHaveLength(matches.length);
    expect(byRole('optimizer')).toHaveLength(ITERATIONS);
    expect(second.rows.slice(0, first.rows.length)).toEqual(first.rows);
  });
});
