import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PAPER_RUN, writePaperRun, type PaperRun } from '../../bench/records/paper-run.js';
import { writeTrainingData } from '../../src/distill/index.js';
import { buildThreads } from '../../src/records/threads.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { readRunForReport } from '../../src/report/index.js';
import { respond } from '../../src/view/index.js';

// The paper-sized run of `npm run bench records`, written at a tiny size: what the bench measures must be a run every
// reader takes for a real one, or its figures measure nothing.
const TINY = {
  ...PAPER_RUN,
  tasks: 2,
  versions: 3,
  championRuns: 4,
  train: 2,
  validation: 1,
  templatesPerKind: 1,
  team: { subagents: 2, subagentCalls: 6, orchestratorCalls: 4 },
  bare: { subagents: 0, subagentCalls: 0, orchestratorCalls: 6 },
};

let root: string;
let run: PaperRun;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-paper-run-'));
  run = await writePaperRun(root, TINY);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the bench’s paper-sized run', () => {
  it('has every episode of the searches, tournaments and evaluation, each log read back with its threads', async () => {
    // Per task: the reference and 3 versions, 4 champion runs, 2 conditions × 2 generations × 2 rollouts.
    expect(run.episodes).toHaveLength(2 * (1 + 3 + 4 + 8));
    for (const episode of [run.episodes[0]!, run.episodes.at(-1)!]) {
      const template = run.templates[episode.template]!;
      const rows = await readProxyLog(join(episode.directory, 'requests.jsonl'));
      expect(rows).toHaveLength(template.log.rows);
      const threads = (await readFile(join(episode.directory, 'threads.jsonl'), 'utf8')).trim().split('\n');
      expect(threads.map((line) => JSON.parse(line) as unknown)).toEqual(
        JSON.parse(JSON.stringify(buildThreads(rows))),
      );
    }
    const team = run.templates.find((template) => template.kind === 'team')!;
    expect(team.threads.map((thread) => [thread.role, thread.calls])).toEqual([
      ['orchestrator', 4],
      ['subagent', 6],
      ['subagent', 6],
    ]);
    expect(team.log.storedBytes).toBeLessThan(team.log.wholeBodyBytes);
  });

  it('reads as a whole run: the report has nothing to note, every viewer page answers', async () => {
    expect((await readRunForReport(run.run)).notes).toEqual([]);
    const teacher = run.episodes.find((episode) => episode.kind === 'teacher')!.directory;
    for (const path of [
      '/',
      '/episodes/',
      '/generations/L0/paper-task-01/',
      '/search/L0/paper-task-01/',
      `${teacher.slice(run.run.length)}/`,
      '/evaluation/final/',
    ]) {
      expect((await respond(run.run, 'GET', path)).status, path).toBe(200);
    }
  });

  it('gives training data from the selected runs, none of their threads taken for forged', async () => {
    expect(run.selected.train).toHaveLength(2 * 2);
    const stats = await writeTrainingData({
      episodes: [
        ...run.selected.train.map((dir) => ({ dir, split: 'train' as const })),
        ...run.selected.validation.map((dir) => ({ dir, split: 'validation' as const })),
      ],
      outDir: join(root, 'dataset'),
      taskDirectories: [run.suite],
      mode: 'team',
    });
    const { perRole, total } = stats.splits.train;
    expect(total.windows).toBeGreaterThan(0);
    // Each episode's orchestrator and both subagents give windows: a thread taken for forged would give none.
    expect(perRole.orchestrator?.threads).toBe(4);
    expect(perRole.subagent?.threads).toBe(8);
  });
});
