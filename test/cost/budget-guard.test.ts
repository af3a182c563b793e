import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { RunConfig } from '../../src/config/run-config.js';
import {
  BudgetExhaustedError,
  onBudgetExhausted,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { BudgetGuard, type BudgetLimits, type SpendScope } from '../../src/cost/budget-guard.js';
import { describeCost } from '../../src/cost/cost-total.js';
import { readSpending, SPENDING_FILE } from '../../src/cost/spend-journal.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { SystemError, UserError } from '../../src/errors.js';
import { ConfigMismatchError } from '../../src/store/frozen-config.js';
import { openRun } from '../../src/store/run-store.js';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mass-budget-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const judging: SpendScope = { stage: 'evaluation', label: 'default', role: 'judge' };
const searching: SpendScope = { stage: 'search', label: 'L0', role: 'judge' };
const call = (usd: number | null, source: 'reported' | 'computed' = 'reported') => ({
  promptTokens: 1000,
  completionTokens: 100,
  reasoningTokens: 0,
  totalTokens: 1100,
  ...(usd === null ? {} : { cost: { usd, source } }),
});

describe('the spending a guard keeps', () => {
  it('is summed from the run’s journal when it opens again: a resumed command counts what was spent before', async () => {
    const first = await BudgetGuard.open(directory, {});
    await first.recordCall(judging, 'judge-model', call(0.01));
    await first.recordCall(judging, 'judge-model', call(0.02, 'computed'));
    await first.recordCall(judging, 'judge-model', null); // no usage: not billed, not counted
    const episode = {
      ...judging,
      role: 'executor' as const,
      key: 'episode/e1',
      model: 'L0',
      calls: 7,
      promptTokens: 5000,
      completionTokens: 900,
      cost: { usd: 0.05, source: 'computed' as const },
    };
    await first.recordOnce(episode);
    await first.recordOnce(episode); // the same episode found finished again: counted once

    const again = await BudgetGuard.open(directory, {});
    const judge = again.spent({ role: 'judge' });
    expect(judge.calls).toBe(2);
    expect(judge.tokens).toBe(2200);
    expect(judge.cost).toMatchObject({
      reportedUsd: 0.01,
      computedUsd: 0.02,
      pricedCalls: 2,
      unpricedCalls: 0,
    });
    expect(judge.cost.usd).toBeCloseTo(0.03, 12);
    expect(describeCost(judge.cost)).toBe('$0.0300 (reported $0.0100, computed $0.0200)');
    const all = again.spent({ stage: 'evaluation', label: 'default' });
    expect(all.calls).toBe(9);
    expect(all.cost.usd).toBeCloseTo(0.08, 12);
    expect(await readSpending(join(directory, SPENDING_FILE))).toHaveLength(3);
  });
});

describe('a budget', () => {
  async function guardWith(
    limits: BudgetLimits,
    spent: Array<[SpendScope, number | null]>,
  ): Promise<BudgetGuard> {
    const guard = await BudgetGuard.open(directory, limits);
    for (const [scope, usd] of spent) await guard.recordCall(scope, 'm', call(usd));
    return guard;
  }

  it('refuses work once its scope has spent it, with exit code 3, naming the budget and what was spent', async () => {
    const events: BudgetExhaustedEvent[] = [];
    const unsubscribe = onBudgetExhausted((event) => events.push(event));
    try {
      const guard = await guardWith({ cost: { stages: { evaluation: 0.02 } } }, [[judging, 0.01]]);
      expect(() => guard.check(judging)).not.toThrow();
      await guard.recordCall(judging, 'm', call(0.01));
      const error = (() => {
        try {
          guard.check(judging);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(BudgetExhaustedError);
      expect(error).toBeInstanceOf(SystemError);
      expect((error as BudgetExhaustedError).exitCode).toBe(3);
      expect((error as Error).message).toMatch(
        /^budgets\.cost\.stages\.evaluation ran out: \$0\.0200 spent of \$0\.0200; .*raise budgets\.cost\.stages\.evaluation/,
      );
      // Another stage is not under this budget.
      expect(() => guard.check(searching)).not.toThrow();
      // Listeners hear of each budget once, however often it refuses.
      expect(() => guard.check(judging)).toThrow(BudgetExhaustedError);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        budget: 'budgets.cost.stages.evaluation',
        unit: 'usd',
        limit: 0.02,
        role: 'judge',
      });
    } finally {
      unsubscribe();
    }
  });

  it('per role covers every stage, the run’s covers everything, and tokens are budgeted the same way', async () => {
    const role = await guardWith({ cost: { roles: { judge: 0.02 } } }, [
      [judging, 0.01],
      [searching, 0.01],
    ]);
    expect(() => role.check({ ...searching, role: 'optimizer' })).not.toThrow();
    expect(() => role.check(judging)).toThrow(/budgets\.cost\.roles\.judge ran out/);
    await rm(join(directory, SPENDING_FILE));

    const run = await guardWith({ cost: { run: 0.015 } }, [[judging, 0.01]]);
    expect(() => run.check({ ...searching, role: 'executor' })).not.toThrow();
    await run.recordCall(searching, 'm', call(0.01));
    expect(() => run.check({ ...searching, role: 'executor' })).toThrow(/budgets\.cost\.run ran out/);
    await rm(join(directory, SPENDING_FILE));

    const tokens = await guardWith({ tokens: { stages: { evaluation: 2000 } } }, [[judging, null]]);
    expect(() => tokens.check(judging)).not.toThrow();
    await tokens.recordCall(searching, 'm', call(null)); // another stage's tokens
    expect(() => tokens.check(judging)).not.toThrow();
    await tokens.recordCall(judging, 'm', call(null));
    expect(() => tokens.check(judging)).toThrow(
      /budgets\.tokens\.stages\.evaluation ran out: 2,200 tokens spent of 2,000 tokens/,
    );
  });

  it('of every stage that spends is taken, and of anything else refused, never a stopper that cannot fire', () => {
    const withStages = (stages: Record<string, number>) =>
      RunConfig.safeParse({
        name: 'r',
        suite: DEMO_SUITE,
        roles: { executor: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } },
        budgets: { cost: { stages } },
      });
    expect(withStages({ search: 1, distill: 2, evaluation: 3, benchmark: 4, students: 5 }).success).toBe(
      true,
    );
    expect(withStages({ train: 5 }).success).toBe(false);
  });

  it('in dollars over calls of unknown cost is refused as the user’s to fix, never a stopper that cannot fire', async () => {
    const guard = await guardWith({ cost: { roles: { judge: 1 } } }, [[judging, null]]);
    expect(() => guard.check(judging)).toThrow(UserError);
    expect(() => guard.check(judging)).toThrow(
      /budgets\.cost\.roles\.judge cannot be kept: 1 billed calls .* give the endpoint prices/,
    );
  });

  it('raised in the configuration (or notify changed) is the same run: its frozen copy follows, other changes are still refused', async () => {
    const config = (budgets: Record<string, unknown>, seed = 0) => ({
      name: 'budgeted',
      suite: DEMO_SUITE,
      seed,
      roles: { executor: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } },
      budgets,
    });
    const open = (given: ReturnType<typeof config>) =>
      openRun({ runsDirectory: directory, name: 'budgeted', configSchema: RunConfig, config: given });
    open(config({ cost: { run: 1 } })).close();
    const raised = open(config({ cost: { run: 5 }, tokens: { stages: { evaluation: 1000 } } }));
    expect(raised.config.budgets.cost).toEqual({ run: 5 });
    raised.close();
    // Another notification command is the same run too.
    const notified = open({
      ...config({ cost: { run: 5 }, tokens: { stages: { evaluation: 1000 } } }),
      notify: { command: ['/usr/local/bin/tell-me'] },
    } as ReturnType<typeof config>);
    expect(notified.config.notify?.command).toEqual(['/usr/local/bin/tell-me']);
    notified.close();
    expect(await readFile(join(directory, 'budgeted', 'config.yaml'), 'utf8')).toMatch(/run: 5/);
    expect(() => open(config({ cost: { run: 5 }, tokens: { stages: { evaluation: 1000 } } }, 7))).toThrow(
      ConfigMismatchError,
    );
  });
});
