import { cp, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { episodeFacts } from '../../src/episode/episode-facts.js';
import type { Thread } from '../../src/records/threads.js';
import type { Random } from '../../src/ranking/seeded-random.js';
import { episodeFiles } from '../../src/store/run-paths.js';
import { prose } from '../support/prose.js';
import { teamRows, writeTeamLog, type TeamLogFigures, type TeamShape } from './team-log.js';

/** How an episode ran: with the teacher directive (collected for training), with a workflow, or bare. */
export type EpisodeKind = 'teacher' | 'team' | 'bare';

/** A finished episode directory whose copies make the run's episodes, and what its record needs. */
export interface EpisodeTemplate {
  kind: EpisodeKind;
  directory: string;
  log: TeamLogFigures;
  threads: Pick<Thread, 'threadId' | 'role' | 'calls' | 'usage'>[];
  /** Bytes on disk of the episode's files, by file (the workspace's summed). */
  bytes: Record<string, number>;
}

/**
 * Writes one episode directory as a finished episode leaves it: the prompt, the proxy log (written by the proxy's
 * encoder), the threads rebuilt from it as the episode's end does, the harness's events, and a workspace of the
 * files a research task leaves (a report, code, data, results, a figure).
 */
export async function writeEpisodeTemplate(
  directory: string,
  kind: EpisodeKind,
  prompt: string,
  shape: TeamShape,
  random: Random,
  lexicon: string[],
): Promise<EpisodeTemplate> {
  const text = (characters: number) => prose(random, lexicon, characters);
  await mkdir(join(directory, episodeFiles.workspace, 'results'), { recursive: true });
  await mkdir(join(directory, episodeFiles.workspace, 'data'), { recursive: true });
  await writeFile(join(directory, episodeFiles.prompt), prompt);
  const rows = teamRows(random, lexicon, prompt, shape);
  const log = await writeTeamLog(join(directory, episodeFiles.proxyLog), rows);
  const { threads, orchestratorFinal } = episodeFacts(rows, { episodePrompt: prompt });
  if (threads.some((thread) => thread.forged))
    throw new Error('a synthetic thread was taken for a forged one');
  await writeFile(
    join(directory, episodeFiles.threads),
    threads.map((thread) => `${JSON.stringify(thread)}\n`).join(''),
  );
  const events = [
    { type: 'system', subtype: 'init', session_id: 'bench', model: 'qwen3-8b', qwen_code_version: '0.24.4' },
    ...rows
      .filter((row) => row.response?.kind === 'completion')
      .slice(-40)
      .map((row) => ({
        type: 'assistant',
        session_id: 'bench',
        message: row.response?.kind === 'completion' ? row.response.completion.message : null,
      })),
    {
      type: 'result',
      subtype: 'success',
      is_error: false,
      session_id: 'bench',
      num_turns: rows.length,
      result: orchestratorFinal?.text ?? '',
    },
  ];
  await writeFile(
    join(directory, episodeFiles.harnessEvents),
    events.map((event) => `${JSON.stringify(event)}\n`).join(''),
  );
  const workspace = join(directory, episodeFiles.workspace);
  await writeFile(join(workspace, 'report.md'), `# Report\n\n${text(6_000)}\n`);
  await writeFile(join(workspace, 'analysis.py'), `import numpy as np\n\n${text(8_000)}\n`);
  const csv = Array.from({ length: 2_000 }, (_, index) => `${index},${(random() * 100).toFixed(4)}`).join(
    '\n',
  );
  await writeFile(join(workspace, 'data', 'measurements.csv'), `dose,response\n${csv}\n`);
  await writeFile(
    join(workspace, 'results', 'metrics.json'),
    JSON.stringify({ ec50: 5.9, hill: 1.2 }, null, 2),
  );
  await writeFile(
    join(workspace, 'results', 'figure.svg'),
    `<svg xmlns="http://www.w3.org/2000/svg">${'<path d="M0 0 L1 1"/>'.repeat(400)}</svg>\n`,
  );
  return {
    kind,
    directory,
    log,
    threads: threads.map(({ threadId, role, calls, usage }) => ({ threadId, role, calls, usage })),
    bytes: await fileSizes(directory),
  };
}

/** Bytes of each file of an episode directory; the workspace's files summed as `workspace`. */
async function fileSizes(directory: string): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const top = path.slice(directory.length + 1).split('/')[0]!;
    sizes[top] = (sizes[top] ?? 0) + (await stat(path)).size;
  }
  return sizes;
}

/** What an episode of the run is: which template it copies, for which task, and how its record reads. */
export interface EpisodeCopy {
  episodeId: string;
  /** The episode's directory. */
  directory: string;
  task: { id: string; dir: string };
  workflowHash: string | null;
  teacher: boolean;
  seed: number;
  model: string;
}

/**
 * Copies a template into an episode directory and writes its record. Every task of the run has the same prompt, so
 * a template is a finished episode of any of them.
 */
export async function copyEpisode(
  template: EpisodeTemplate,
  copy: EpisodeCopy,
  startedAt: Date,
): Promise<void> {
  await cp(template.directory, copy.directory, { recursive: true });
  const durationMs = template.log.rows * 6_000;
  const total = {
    promptTokens: template.log.promptTokens,
    completionTokens: template.log.completionTokens,
    reasoningTokens: template.threads.reduce((sum, thread) => sum + thread.usage.reasoningTokens, 0),
  };
  await EpisodeRecord.write(join(copy.directory, episodeFiles.record), {
    episodeId: copy.episodeId,
    task: copy.task,
    workflowHash: copy.workflowHash,
    teacher: copy.teacher,
    seed: copy.seed,
    dataSeed: copy.seed,
    model: copy.model,
    baseUrl: 'http://127.0.0.1:8000/v1',
    status: 'success',
    failure: null,
    timings: {
      startedAt: startedAt.toISOString(),
      endedAt: new Date(startedAt.getTime() + durationMs).toISOString(),
      durationMs,
      harnessMs: durationMs - 2_000,
    },
    usage: {
      total,
      perThread: template.threads.map((thread) => ({
        ...thread.usage,
        threadId: thread.threadId,
        role: thread.role,
        calls: thread.calls,
      })),
    },
    modelCalls: template.log.rows,
    failedModelCalls: 0,
    delegations: template.log.delegations,
    integrity: { assets: [], tampered: false, tamperedPaths: [] },
    sandbox: {
      enabled: true,
      exitCode: 0,
      signal: null,
      limitExceeded: null,
      cpuSeconds: 600,
      peakMemoryBytes: 2e9,
    },
    harness: { name: 'qwen-code', version: '0.24.4' },
  });
}
