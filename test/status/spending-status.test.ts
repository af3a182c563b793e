import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { appendSpending, SPENDING_FILE, type SpendRow } from '../../src/cost/spend-journal.js';
import { readSpendingStatus, spendingLines } from '../../src/status/spending.js';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mass-spending-status-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function row(key: string, fields: Partial<SpendRow>): SpendRow {
  return {
    schemaVersion: 1,
    kind: 'spend',
    key,
    at: '2026-12-04T00:00:00.000Z',
    stage: 'search',
    label: 'L0',
    role: 'judge',
    model: 'm',
    calls: 1,
    promptTokens: 1000,
    completionTokens: 100,
    cost: null,
    ...fields,
  };
}

describe('mass status, spending', () => {
  it('sums the journal (reported and computed apart) and sets each budget of the configuration beside it', async () => {
    await writeFile(
      join(directory, 'config.yaml'),
      'name: r\nbudgets:\n  cost:\n    run: 1\n    stages: { search: 0.05 }\n  tokens:\n    roles: { executor: 100000 }\n',
    );
    const file = join(directory, SPENDING_FILE);
    await appendSpending(file, row('call/1', { cost: { usd: 0.02, source: 'reported' } }));
    await appendSpending(file, row('call/2', { role: 'optimizer', cost: { usd: 0.04, source: 'computed' } }));
    // An episode's row written again by a resumed command counts once.
    const episode = row('episode/e1', {
      stage: 'evaluation',
      role: 'executor',
      calls: 5,
      promptTokens: 50_000,
    });
    await appendSpending(file, episode);
    await appendSpending(file, episode);

    const spending = await readSpendingStatus(directory);
    expect(spending?.total).toMatchObject({ calls: 7, promptTokens: 52_000, completionTokens: 300 });
    expect(spending?.total.cost).toMatchObject({ reportedUsd: 0.02, computedUsd: 0.04, unpricedCalls: 5 });
    expect(spending?.budgets.map(({ budget, spent, limit }) => ({ budget, spent, limit }))).toEqual([
      { budget: 'budgets.cost.run', spent: expect.closeTo(0.06, 10), limit: 1 },
      { budget: 'budgets.cost.stages.search', spent: expect.closeTo(0.06, 10), limit: 0.05 },
      { budget: 'budgets.tokens.roles.executor', spent: 50_100, limit: 100_000 },
    ]);
    // Per stage, generation or evaluation, and role, as the journal's rows group.
    expect(
      spending?.groups.map(({ stage, label, role, spentFigures }) => [
        stage,
        label,
        role,
        spentFigures.calls,
      ]),
    ).toEqual([
      ['search', 'L0', 'judge', 1],
      ['search', 'L0', 'optimizer', 1],
      ['evaluation', 'L0', 'executor', 5],
    ]);
    const text = spendingLines(spending).join('\n');
    expect(text).toContain('    search L0 optimizer: $0.0400 (computed), 1100 tokens in 1 calls');
    expect(text).toContain('spent: $0.0600 (reported $0.0200, computed $0.0400; 5 calls without a cost)');
    expect(text).toMatch(/budgets\.cost\.stages\.search: spent \$0\.0600 .* \/ \$0\.0500 \(spent:/);
    expect(text).toContain('budgets.tokens.roles.executor: spent 50100 tokens / 100000');
  });

  it('says nothing of a run with neither a journal nor budgets', async () => {
    await writeFile(join(directory, 'config.yaml'), 'name: r\n');
    expect(await readSpendingStatus(directory)).toBeNull();
    expect(spendingLines(null)).toEqual([]);
  });
});
