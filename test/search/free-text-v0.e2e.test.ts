import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import { searchTasks, type SearchSummary } from '../../src/search/search-tasks.js';
import { TaskSearchRecord, type TaskSearchResult } from '../../src/records/search-records.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel } from '../../src/toy/index.js';
import { searchPage } from '../../src/view/pages/search-page.js';
import { renderWorkflow } from '../../src/workflow/render.js';
import { wordEditRatio } from '../../src/workflow/word-diff.js';
import { TeamDesign, Workflow } from '../../src/workflow/workflow.js';
import { temporaryDirectory } from '../support/fixtures.js';

/**
 * A search on the toy model of a demo task whose v0 is free text, as the official repository writes one (the task
 * folder's team.md): the team runs v0 as written, the optimizer turns it into a structured v1, and every record
 * keeps both forms. One iteration keeps it short.
 */
const TASK = 'demo-volatility';
const TEAM_TEXT = `Create an agent team with following agent candidates to solve this problem:
[
  { "agent_id": "agent_orchestrator", "role": "Lead Quant Coordinator", "instruction": "Decompose the work, route it and check every report." },
  { "agent_id": "agent_return_analyst", "role": "Quant Analyst", "instruction": "Compute daily log returns from data/prices.csv and write results.json." },
  { "agent_id": "agent_report_writer", "role": "Report Writer", "instruction": "Read results.json and write report.md with the sections Summary, Method and Results." }
]

In logs.txt, document every agent you spawned and what it did.
`;

describe('search of a task whose v0 team is free text, on the toy model', () => {
  const directory = temporaryDirectory();
  const suite = join(directory.path, 'suite');
  let server: ReplyServer;
  let run: Run<RunConfig>;
  let summary: SearchSummary;
  let result: TaskSearchResult;
  const searchBase = () => join(run.directory, 'search', 'L0', TASK);

  beforeAll(async () => {
    // The demo suite with the task's team replaced by free text in team.md.
    cpSync(DEMO_SUITE, suite, { recursive: true });
    const manifestFile = join(suite, TASK, 'task.yaml');
    const manifest = parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(manifestFile, stringify({ ...manifest, workflow: { text: { file: 'team.md' } } }));
    writeFileSync(join(suite, TASK, 'team.md'), TEAM_TEXT);

    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy' });
    const chat = new OpenAICompatibleModel({ baseUrl: server.baseUrl });
    run = openRun({
      runsDirectory: join(directory.path, 'runs'),
      name: 'free-text-v0',
      configSchema: RunConfig,
      config: {
        name: 'free-text-v0',
        suite,
        roles: { executor: { model: 'mass-toy', baseUrl: server.baseUrl } },
      },
    });
    const sampling = { temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 4000 };
    summary = await searchTasks({
      run,
      generation: 'L0',
      taskDirs: [join(suite, TASK)],
      concurrency: { tasks: 1, episodes: 2, judgments: 1 },
      executor: { model: 'mass-toy', baseUrl: server.baseUrl },
      judge: { model: chat, modelName: 'mass-toy', sampling },
      optimizer: { model: chat, modelName: 'mass-toy', sampling },
      settings: {
        iterations: 1,
        championRule: 'paper',
        judgeMode: 'random',
        judgeRepairAttempts: 1,
        optimizerRepairAttempts: 1,
        // A bound no restatement of free text could meet: the structuring proposal must not be held to it.
        stabiliser: { initialMaxChange: 0.05, decay: 0.5 },
        seed: 3,
        dataSeeds: { seed: 3, tasks: {} },
        episode: { timeoutSeconds: 150 },
      },
      tokenCounter: await loadTokenCounter(),
      hiddenDirectories: [run.directory],
    });
    result = summary.results[0]!;
  }, 300_000);

  afterAll(async () => {
    run?.close();
    await server?.close();
    directory.remove();
  });

  it('runs v0 as the free text, as written, after the task', async () => {
    expect(summary.failures).toEqual([]);
    const v0 = result.iterations[0]!;
    expect(v0.episode?.status).toBe('success');
    const episodeDir = join(run.directory, v0.episode!.dir);
    const prompt = readFileSync(join(episodeDir, 'prompt.md'), 'utf8');
    expect(prompt).toContain(`\n\n${TEAM_TEXT.trimEnd()}\n`);
    expect(prompt).not.toContain('## Team workflow');
    // The toy orchestrator read the agents the text lists and delegated to them.
    const record = await EpisodeRecord.read(join(episodeDir, 'episode.json'));
    expect(record.delegations).toBeGreaterThan(0);
    expect(readFileSync(join(episodeDir, 'threads.jsonl'), 'utf8')).toContain('agent_return_analyst');
    const written = TeamDesign.parse(
      JSON.parse(readFileSync(join(searchBase(), 'v0', 'workflow.json'), 'utf8')),
    );
    expect(written).toEqual({ schemaVersion: 1, text: TEAM_TEXT });
  });

  it('the optimizer was told the design is free text and wrote a structured v1, unbounded, which the team ran', async () => {
    const v1 = result.iterations[1]!;
    expect(v1.proposal).toMatchObject({ ok: true, basedOn: 'v0' });
    expect(v1.maxChangeFraction).toBeNull();
    const proposal = v1.proposal!;
    const design = Workflow.parse(proposal.ok && proposal.design);
    expect(design.agents.map((agent) => agent.id)).toEqual([
      'agent-orchestrator',
      'agent-return-analyst',
      'agent-report-writer',
    ]);
    expect(v1.episode?.status).toBe('success');
    const prompt = readFileSync(join(run.directory, v1.episode!.dir, 'prompt.md'), 'utf8');
    expect(prompt).toContain(renderWorkflow(design));

    const call = await OptimizerCallRecord.read(join(searchBase(), 'v1', 'optimizer.json'));
    expect(call.outcome.prompt.user).toContain('This design is free text');
    expect(call.outcome.maxChangeFraction).toBeNull();
    expect(call.outcome.ok).toBe(true);
    if (!call.outcome.ok) return;
    // The change size is the word edit ratio of what the orchestrator read in v0 and in v1.
    const expected = wordEditRatio(TEAM_TEXT, renderWorkflow(design));
    expect(call.outcome.changeFraction).toBeCloseTo(expected, 12);
    expect(expected).toBeGreaterThan(0.05);
    expect(expected).toBeLessThan(1);
    expect(proposal.ok && proposal.changeFraction).toBe(call.outcome.changeFraction);
    expect(call.outcome.diffText).toContain('~ rewritten from free text into the structured form');
    expect(call.outcome.diffText).toContain(
      '  - In logs.txt, document every agent you spawned and what it did.',
    );
    expect(call.outcome.diffText).toContain('  + ### agent-return-analyst');
  });

  it('records both forms: result.json reads back, the champion design is one of them, the viewer shows each', async () => {
    const written = await TaskSearchRecord.read(join(searchBase(), 'result.json'));
    expect(written).toEqual(result);
    expect(['reference', 'v0', 'v1']).toContain(result.champion);
    if (result.champion === 'v0')
      expect(result.championDesign).toEqual({ schemaVersion: 1, text: TEAM_TEXT });
    if (result.champion === 'v1')
      expect(Workflow.parse(result.championDesign)).toEqual(result.championDesign);
    expect(existsSync(join(searchBase(), 'v1', 'workflow.json'))).toBe(true);

    const html = await searchPage(run.directory, 'L0', TASK);
    expect(html).toContain('the design (free text, as the task gives it)');
    expect(html).toContain('In logs.txt, document every agent you spawned and what it did.');
    expect(html).toMatch(/Changes from v0\s*\(\d+% of the design\)/);
    expect(html).toContain('rewritten from free text into the structured form');
  });
});
