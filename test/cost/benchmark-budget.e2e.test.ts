import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BenchmarkSummaryRecord } from '../../src/records/benchmark-records.js';
import { runBenchmarks, type BenchmarkDataset } from '../../src/benchmark/benchmark-run.js';
import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import {
  BudgetExhaustedError,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { readSpending, SPENDING_FILE } from '../../src/cost/spend-journal.js';
import { configuredModel, RunSession } from '../../src/session/run-session.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { loadHarborDataset } from '../../src/tasks/harbor-task.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { EPISODE_TOKENS, StandInTeam } from './stand-in-team.js';

const suiteDir = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));
const TRIALS = 3;
/** The team answers 42. */
const standInTeam = (task: LoadedTask) =>
  new StandInTeam(task, (workspace) => writeFile(join(workspace, 'answer.txt'), '42'));

// In-process, with a stand-in team; end-to-end only because each trial's verification runs in a sandbox of its own.

describe('budgets in mass benchmark', () => {
  const directory = temporaryDirectory();
  let dataset: BenchmarkDataset;
  let task: LoadedTask;
  /** Lists the model the trials are served under and answers the serving's probe; the team is a stand-in. */
  let server: ScriptedServer;

  beforeAll(async () => {
    server = await startScriptedServer({ models: ['scripted'], responder: () => step.text('unused') });
    task = await loadTask(join(suiteDir, 'tiny-sum'));
    const taskDir = join(directory.path, 'answers', 'write-42');
    const files = {
      'task.toml':
        'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n[agent]\ntimeout_sec = 120.0\n[environment]\nallow_internet = false\n',
      'instruction.md': '# write-42\n\nWrite the answer.\n',
      'tests/test.sh':
        'LOGS=${LOGS_DIR:-/logs/verifier}\nif [ "$(cat "$WORKSPACE/answer.txt" 2>/dev/null)" = "42" ]; then echo 1 > "$LOGS/reward.txt"; else echo 0 > "$LOGS/reward.txt"; fi\n',
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(taskDir, file, '..'), { recursive: true });
      writeFileSync(join(taskDir, file), text);
    }
    dataset = {
      name: 'answers',
      sources: [join(directory.path, 'answers')],
      ...(await loadHarborDataset([join(directory.path, 'answers')])),
    };
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  async function benchmark(tokens: Record<string, unknown>, team: StandInTeam) {
    const config = parseRunConfig(
      {
        name: 'bench',
        suite: suiteDir,
        roles: { executor: { model: 'scripted', baseUrl: server.baseUrl } },
        budgets: { episodeTimeoutSeconds: 120, tokens },
        evaluation: { concurrency: { episodes: 1 } },
        seed: 0,
      },
      'test configuration',
    );
    const run = openRun({ runsDirectory: directory.path, name: 'bench', configSchema: RunConfig, config });
    const session = new RunSession(run as Run<RunConfig>, suiteDir, configuredModel(config).kind, () => team);
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    try {
      const outcome = await runBenchmarks({
        session,
        datasets: [dataset],
        agent: 'team',
        trials: TRIALS,
        internet: { kind: 'offline' },
        hostCompatibleImages: [],
        containerEngine: null,
      }).then(
        (summaries) => ({ summaries, error: null }),
        (error: unknown) => ({ summaries: null, error }),
      );
      return { ...outcome, events, rows: await readSpending(run.path(SPENDING_FILE)) };
    } finally {
      unsubscribe();
      await session.close();
    }
  }

  it('starts no trial past a budget, and a rerun with the budget raised redoes none', async () => {
    // One token: the first trial starts with nothing spent, the second finds the stage's budget spent.
    const firstTeam = standInTeam(task);
    const first = await benchmark({ stages: { benchmark: 1 } }, firstTeam);
    expect(first.error).toBeInstanceOf(BudgetExhaustedError);
    expect((first.error as BudgetExhaustedError).exitCode).toBe(3);
    expect((first.error as Error).message).toContain('budgets.tokens.stages.benchmark ran out');
    expect(first.events).toEqual([
      expect.objectContaining({
        budget: 'budgets.tokens.stages.benchmark',
        spent: EPISODE_TOKENS,
        stage: 'benchmark',
        label: 'answers',
        role: 'executor',
      }),
    ]);
    expect(firstTeam.started).toHaveLength(1);
    expect(first.rows).toMatchObject([{ stage: 'benchmark', label: 'answers', role: 'executor' }]);

    const secondTeam = standInTeam(task);
    const second = await benchmark({ stages: { benchmark: 10 * TRIALS * EPISODE_TOKENS } }, secondTeam);
    expect(second.error).toBeNull();
    expect(secondTeam.started).toHaveLength(TRIALS - 1);
    const trials = [...firstTeam.started, ...secondTeam.started];
    expect(new Set(trials).size).toBe(TRIALS);
    // Each trial journaled once, the first command's row kept as it was.
    expect(second.rows).toHaveLength(TRIALS);
    expect(second.rows[0]).toEqual(first.rows[0]);
    const summary = await BenchmarkSummaryRecord.read(
      join(directory.path, 'bench', 'benchmarks', 'answers', 'summary-team.json'),
    );
    expect(summary.trials.map((trial) => trial.verification.reward)).toEqual([1, 1, 1]);
  }, 30_000);
});
