import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import type { EpisodeBackend, EpisodeRequest } from '../../src/queue/episode-backend.js';
import { TaskSearchRecord } from '../../src/records/search-records.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel } from '../../src/toy/index.js';
import type { Workflow } from '../../src/workflow/workflow.js';
import { episodeRecord } from '../judge/support.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { openSearchRun, searchOneEndpoint } from './one-endpoint-search.js';

/**
 * A search in which the toy model plays the judge and the optimizer on their real prompts, beside a stand-in team: every
 * reply of both must parse at the first attempt, in the formats they now have (the judge's lists of points, the files
 * both workspaces share shown once, the optimizer shown the judge's criteria and the workspace it must beat).
 */
const taskDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));

/** A module every run leaves unchanged: shown once in each judgment. */
const PIPELINE = Array.from(
  { length: 16 },
  (_, index) =>
    `def stage_${index}(rows):\n    """Stage ${index}: keep the wells whose inhibition is a finite number, then hand them on."""\n    return [row for row in rows if row.get("inhibition") not in (None, "", "nan")]\n`,
).join('\n');

/**
 * The stand-in team: the deliverables (the bare task forgets `ec50_uM`), the shared module, and one checks file per
 * subagent reporting each check its contract names as passed, so that designs with more checks score more.
 */
class StandInTeam implements EpisodeBackend {
  readonly kind = 'local';
  constructor(private readonly task: LoadedTask) {}

  async run(request: EpisodeRequest) {
    const { outDir, seed } = request.options;
    const workflow = request.options.workflow as Workflow | undefined;
    const workspace = join(outDir, 'workspace');
    await mkdir(join(workspace, 'checks'), { recursive: true });
    const results = workflow
      ? { ec50_uM: 5.91, hill_slope: 1.78, n_points: 24 }
      : { hill_slope: 1.78, n_points: 24 };
    await writeFile(join(workspace, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    const words = 'The Hill fit used every well and its residuals are small. '.repeat(10);
    await writeFile(
      join(workspace, 'report.md'),
      `# Potency\n\n## Summary\n\n${words}\n\n## Method\n\nA Hill curve.\n\n## Results\n\nEC50 5.91 µM.\n`,
    );
    await writeFile(join(workspace, 'pipeline.py'), PIPELINE);
    for (const agent of workflow?.agents ?? []) {
      const checks = Object.fromEntries((agent.contract?.checks ?? []).map((check) => [check.name, true]));
      await writeFile(
        join(workspace, 'checks', `${agent.id}.json`),
        JSON.stringify({ agent: agent.id, checks }),
      );
    }
    const record = episodeRecord(this.task, { episodeId: outDir.split('/').at(-1)!, seed: seed! });
    await EpisodeRecord.write(join(outDir, 'episode.json'), record);
    return { record, ran: true };
  }

  async close() {}
}

describe('a search with the toy model as judge and optimizer (stand-in team)', () => {
  const directory = temporaryDirectory();
  let server: ReplyServer;
  let task: LoadedTask;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy', seed: 1 });
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it('parses every reply at the first attempt, in the new formats', async () => {
    const run = openSearchRun({
      runsDirectory: directory.path,
      name: 'toy-roles',
      suite: join(taskDir, '..'),
      model: 'mass-toy',
      baseUrl: server.baseUrl,
    });
    try {
      const summary = await searchOneEndpoint({
        run,
        baseUrl: server.baseUrl,
        model: 'mass-toy',
        chat: new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } }),
        taskDirs: [taskDir],
        settings: {
          iterations: 2,
          // Every design meets the bare reference first: the optimizer is shown an excerpt of its workspace.
          championRule: 'official',
          judgeMode: 'both',
          seed: 3,
          timeoutSeconds: 60,
        },
        tokenCounter: await loadTokenCounter(),
        episodes: new StandInTeam(task),
      });
      expect(summary.failures).toEqual([]);
      const base = join(run.directory, 'search', 'L0', 'demo-potency');
      const result = await TaskSearchRecord.read(join(base, 'result.json'));
      expect(result.counts).toMatchObject({ failedJudgments: 0, failedProposals: 0 });

      for (const version of ['v1', 'v2']) {
        const { outcome } = await OptimizerCallRecord.read(join(base, version, 'optimizer.json'));
        expect(outcome.ok).toBe(true);
        expect(outcome.attempts).toHaveLength(1);
        expect(outcome.shown?.criteria).toMatchObject({ lens: task.judge.lens, focus: task.judge.focus });
        expect(outcome.shown?.criteria?.rubric).toHaveLength(6);
        expect(outcome.shown?.nextMatch).toMatchObject({
          version,
          rule: 'official',
          judgeMode: 'both',
          opponent: { label: 'reference', bare: true },
        });
        expect(outcome.shown?.opponentWorkspace?.label).toBe('reference');
        expect(outcome.prompt.user).toContain(
          '# Workspace of reference, which the next design is judged against',
        );
        expect(outcome.shown?.opponentWorkspace?.text).toContain('required keys missing: ec50_uM');
        expect(outcome.prompt.user).toContain('# What the judge values');
        expect(outcome.prompt.user).toContain('# The next comparison');
        expect(outcome.prompt.user).toMatch(/^The judge's points against v\d+ \(both orders\):$/m);
      }

      const judgments = result.iterations.flatMap((iteration) => iteration.decision?.matches ?? []);
      // v0 against the reference; each later version against it, and then against the champion when it won.
      expect(judgments.length).toBeGreaterThanOrEqual(3);
      for (const match of judgments) {
        const judgment = await PairwiseJudgmentRecord.read(join(run.directory, match.judgment!));
        expect(judgment.status).toBe('decided');
        // The stand-in team writes the same module and report every time.
        expect(judgment.sharedFiles).toEqual(['pipeline.py', 'report.md']);
        for (const single of judgment.judgments) {
          expect(single.attempts).toHaveLength(1);
          expect(Array.isArray(single.verdict?.against_A) && Array.isArray(single.verdict?.against_B)).toBe(
            true,
          );
          expect(single.prompt.user.split('def stage_15(rows):')).toHaveLength(2);
        }
      }
      // Every comparison the optimizer read carries the judge's lists, order by order.
      const comparisons = result.iterations.flatMap((iteration) => iteration.decision?.comparisons ?? []);
      expect(comparisons).toHaveLength(judgments.length);
      for (const comparison of comparisons) {
        expect(comparison.orders).toHaveLength(2);
        for (const order of comparison.orders!) expect(order.pointsAgainstCandidate).toBeDefined();
      }
      // The bare task forgot ec50_uM: v0's win over it is explained by a point against the reference.
      const first = readFileSync(join(base, 'v1', 'optimizer.json'), 'utf8');
      expect(first).toContain('the preflight finds `results.json` incomplete');
    } finally {
      run.close();
    }
  });
});
