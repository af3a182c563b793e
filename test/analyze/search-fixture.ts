// A run directory with finished searches and nothing else, written from the real record schemas: for the workflow
// analysis's tests. Each task's reference run has its prompt (the task description) and each version its design.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TaskSearchRecord } from '../../src/records/search-records.js';
import { episodeFiles, searchResultPath, searchVersionPath } from '../../src/store/run-paths.js';
import type { TeamDesign, Workflow } from '../../src/workflow/workflow.js';

export interface FixtureTask {
  task: string;
  description: string;
  /** By version, oldest first; null: the optimizer failed, so the version has no design. */
  designs: Array<[string, TeamDesign | null]>;
  champion: string;
}

const execution = {
  status: 'success' as const,
  failure: null,
  delegations: 1,
  subagentThreads: 1,
  modelCalls: 3,
  failedModelCalls: 0,
  tokens: { prompt: 100, completion: 50, reasoning: 0, orchestratorCompletion: 20, subagentCompletion: 30 },
  durationMs: 1000,
  limitExceeded: null,
  tamperedPaths: [],
};

/** Writes the searches of `tasks` as generation `generation` of the run in `run`. */
export async function writeSearches(run: string, generation: string, tasks: FixtureTask[]): Promise<void> {
  for (const task of tasks) {
    const referenceId = `${generation}-${task.task}-reference`;
    const referenceDir = join('episodes', referenceId);
    await mkdir(join(run, referenceDir), { recursive: true });
    await writeFile(join(run, referenceDir, episodeFiles.prompt), task.description);
    for (const [version, design] of task.designs) {
      if (design === null) continue;
      const file = join(run, searchVersionPath(generation, task.task, version, 'workflow'));
      await mkdir(join(file, '..'), { recursive: true });
      await writeFile(file, JSON.stringify(design, null, 2));
    }
    await TaskSearchRecord.write(join(run, searchResultPath(generation, task.task)), {
      generation,
      task: task.task,
      championRule: 'paper',
      judgeMode: 'random',
      reference: { episodeId: referenceId, dir: referenceDir, status: 'success', reason: null, execution },
      champion: task.champion,
      championDesign: (task.designs.find(([version]) => version === task.champion)?.[1] ?? null) as never,
      championEpisode: task.champion === 'reference' ? null : `${generation}-${task.task}-${task.champion}`,
      beatsReference: task.champion !== 'reference',
      championHistory: task.designs.map(([version]) => ({ version, champion: task.champion })),
      iterations: task.designs.map(([version, design]) => ({
        version,
        proposal:
          version === 'v0'
            ? null
            : design === null
              ? { ok: false, reason: 'invalid', errors: ['not JSON'], basedOn: 'v0' }
              : { ok: true, design: design as Workflow, changeFraction: 0.2, basedOn: 'v0' },
        episode: null,
        decision: null,
        maxChangeFraction: null,
      })),
      counts: { episodes: 0, failedEpisodes: 0, judgments: 0, failedJudgments: 0, failedProposals: 0 },
    });
  }
}

/**
 * A complete three-agent design whose every text names `topic`; `extra` is added to the lead's instruction, and
 * `prefix` to every agent id (so that the hops, which name agents by id, differ between tasks too).
 */
export function topicDesign(topic: string, extra = '', prefix = ''): Workflow {
  const [lead, analyst, writer] = ['lead', 'analyst', 'writer'].map((id) => `${prefix}${id}`);
  return {
    schemaVersion: 1,
    agents: [
      {
        id: lead!,
        kind: 'orchestrator',
        role: `Lead of the ${topic} study.`,
        instruction: `Plan the ${topic} work and delegate it.${extra}`,
      },
      {
        id: analyst!,
        kind: 'subagent',
        role: `Analyst of ${topic}.`,
        instruction: `Analyse the ${topic} data.`,
        contract: {
          fields: [
            {
              name: 'summary',
              type: 'object',
              description: `What the ${topic} analysis found.`,
              fields: [{ name: 'estimate', type: 'number', description: `The ${topic} estimate.` }],
            },
          ],
          checks: [{ name: 'finite', description: 'Every number is finite.' }],
        },
      },
      {
        id: writer!,
        kind: 'subagent',
        role: `Writer of the ${topic} report.`,
        instruction: `Write the ${topic} report.`,
        contract: { fields: [{ name: 'report', type: 'path', description: 'The report.' }], checks: [] },
      },
    ],
    hops: [
      { from: lead!, to: analyst! },
      { from: analyst!, to: lead!, condition: 'the checks fail' },
      { from: lead!, to: writer! },
    ],
  };
}
