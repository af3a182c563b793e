// The run page's live section shows what `mass status` says of spending: the journal's spending in all and per stage
// and role, and each budget beside its limit. Read through the viewer's own routes (no browser): the section's markup
// and the status JSON agree, a row added to the journal shows on the next fetch, and the page's policy is the live
// page's, unchanged.
import { appendFile, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { appendSpending, SPENDING_FILE, type SpendRow } from '../../src/cost/spend-journal.js';
import { MODEL_CALLS_WRITER } from '../../src/judge/open-model-calls.js';
import type { RunStatus } from '../../src/status/run-status.js';
import { openRunDatabase } from '../../src/store/database.js';
import { LIVE_JSON_ROUTE, LIVE_PAGE_POLICY, LIVE_SECTION_ROUTE } from '../../src/view/live-script.js';
import { respond } from '../../src/view/respond.js';

let run: string;

beforeEach(async () => {
  run = join(await mkdtemp(join(tmpdir(), 'mass-live-spending-')), 'run');
  await mkdir(run);
  const database = openRunDatabase(join(run, 'mass.db'));
  database
    .prepare(
      "INSERT INTO steps (key, status, attempts, started_at, finished_at, duration_ms, error) VALUES ('search/L0/t/v1/judge', 'started', 1, ?, NULL, NULL, NULL)",
    )
    .run(new Date().toISOString());
  database.close();
  await writeFile(
    join(run, 'mass.lock'),
    JSON.stringify({
      pid: process.pid,
      hostname: hostname(),
      token: 't',
      acquiredAt: new Date(Date.now() - 60_000).toISOString(),
      command: 'mass search',
    }),
  );
  await writeFile(
    join(run, 'config.yaml'),
    'name: run\nbudgets:\n  cost:\n    stages: { search: 0.05 }\n  tokens:\n    run: 100000\n',
  );
});
afterEach(async () => {
  await rm(join(run, '..'), { recursive: true, force: true });
});

function row(key: string, fields: Partial<SpendRow>): SpendRow {
  return {
    schemaVersion: 1,
    kind: 'spend',
    key,
    at: new Date().toISOString(),
    stage: 'search',
    label: 'L0',
    role: 'judge',
    model: 'judge-model',
    calls: 1,
    promptTokens: 2000,
    completionTokens: 300,
    cost: { usd: 0.02, source: 'reported' },
    ...fields,
  };
}

const text = (body: string | Buffer) => body.toString();
const section = async () => {
  const response = await respond(run, 'GET', LIVE_SECTION_ROUTE);
  expect(response.status).toBe(200);
  expect(response.headers['X-Run-State']).toBe('running');
  return text(response.body);
};
const json = async () => JSON.parse(text((await respond(run, 'GET', LIVE_JSON_ROUTE)).body)) as RunStatus;

describe('the live run page, spending', () => {
  it('shows the spending per stage and role and each budget, as the status JSON has them, and follows the journal', async () => {
    await appendSpending(join(run, SPENDING_FILE), row('call/1', {}));
    await appendSpending(
      join(run, SPENDING_FILE),
      row('call/2', { role: 'optimizer', cost: { usd: 0.01, source: 'computed' } }),
    );
    const status = await json();
    expect(status.spending?.groups.map((group) => [group.stage, group.label, group.role])).toEqual([
      ['search', 'L0', 'judge'],
      ['search', 'L0', 'optimizer'],
    ]);
    const first = await section();
    expect(first).toContain('<h3>Spending</h3>');
    expect(first).toContain('$0.0300 (reported $0.0200, computed $0.0100)');
    expect(first).toMatch(
      /<td>search<\/td>\s*<td>L0<\/td>\s*<td>optimizer<\/td>\s*<td>\$0\.0100 \(computed\)<\/td>/,
    );
    expect(first).toContain('budgets.cost.stages.search');
    expect(first).toContain('$0.0300 (reported $0.0200, computed $0.0100) / $0.0500');
    expect(first).toContain('budgets.tokens.run');
    expect(first).toContain('4600 tokens / 100000');
    expect(first).not.toContain('spent: work past it is not started');

    // A judge call ends: the next fetch shows it, and the search's dollar budget is now spent.
    await appendSpending(
      join(run, SPENDING_FILE),
      row('call/3', { cost: { usd: 0.03, source: 'reported' } }),
    );
    const second = await section();
    expect(second).toContain('$0.0600 (reported $0.0500, computed $0.0100) / $0.0500');
    expect(second).toContain('<span class="bad">spent: work past it is not started</span>');
    expect((await json()).spending?.total.calls).toBe(3);
  });

  it('says when the run has neither a journal nor a budget; the run page keeps its one policy', async () => {
    await writeFile(join(run, 'config.yaml'), 'name: run\n');
    expect(await section()).toContain('no spending journal and no budget');
    // A torn last line (a journal being written) does not break the section.
    await appendFile(join(run, SPENDING_FILE), '{"schemaVersion":1,"kind":"spe');
    expect(await section()).toContain('<h3>Spending</h3>');
    const page = await respond(run, 'GET', '/');
    expect(page.headers['Content-Security-Policy']).toBe(LIVE_PAGE_POLICY);
  });

  it('shows a judge step in flight with the model call it waits on', async () => {
    const call = {
      seq: 0,
      startedAt: new Date(Date.now() - 5000).toISOString(),
      role: 'judge',
      model: 'judge-model',
      endpoint: 'openai-compatible http://127.0.0.1:8000/v1',
      step: 'search/L0/t/v1/judge',
      promptChars: 123_400,
    };
    await writeFile(
      join(run, 'model-calls-open.json'),
      JSON.stringify({ writer: MODEL_CALLS_WRITER, calls: [call] }),
    );
    const markup = await section();
    expect(markup).toContain('search/L0/t/v1/judge');
    expect(markup).toMatch(
      /<div>#0 to judge-model \(judge\), [56]s, prompt 123\.4k chars, waiting for its answer<\/div>/,
    );
  });
});
