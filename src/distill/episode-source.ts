import { readFile } from 'node:fs/promises';

import { EpisodeRecord } from '../records/episode-record.js';
import { buildThreads, Thread } from '../records/threads.js';
import { UserError, errorMessage } from '../errors.js';
import { readProxyLog } from '../proxy/log-row.js';
import { readJsonLines } from '../store/json-lines.js';
import { episodeFiles, episodePath } from '../store/run-paths.js';
import { isFile } from '../tasks/file-kind.js';
import type { BareTasks } from './bare-tasks.js';
import { hostPathReplacements, type PathReplacement } from './host-path-rewrite.js';
import type { DataSplit } from '../records/training-records.js';

/** One episode as the builder needs it. */
export interface EpisodeSource {
  episodeId: string;
  taskId: string;
  split: DataSplit;
  /** The episode ran with a workflow or the teacher directive (not a bare-task episode). */
  team: boolean;
  /** What the orchestrator was given (`prompt.md`). */
  prompt: string;
  /** The bare-task prompt that replaces it. */
  bareTask: string;
  threads: Thread[];
  /** Host paths the agents saw, to be replaced by the sandbox's fixed ones (none for a sandboxed episode). */
  hostPaths?: PathReplacement[];
}

export interface ReadEpisodeOptions {
  bareTasks: BareTasks;
  /** Use episodes that did not succeed too (default: refuse them; selection should never pass one). */
  allowFailed?: boolean;
}

/**
 * Reads an episode directory: `episode.json`, `prompt.md`, and its conversations from `threads.jsonl` (or rebuilt
 * from the proxy log `requests.jsonl` when there is none).
 */
export async function readEpisodeSource(
  directory: string,
  split: DataSplit,
  options: ReadEpisodeOptions,
): Promise<EpisodeSource> {
  const record = await EpisodeRecord.read(episodePath(directory, 'record'));
  if (record.status !== 'success' && !options.allowFailed) {
    throw new UserError(
      `${directory}: episode ${record.episodeId} did not succeed (${record.failure?.kind ?? 'failure'}); select successful episodes for training data`,
    );
  }
  const prompt = await readText(episodePath(directory, 'prompt'));
  const bareTask = await options.bareTasks.prompt(record.task.id, record.task.dir);
  const threads = await readThreads(directory, prompt);
  if (!prompt.startsWith(bareTask.trimEnd())) {
    throw new UserError(
      `${directory}: prompt.md does not begin with the text of task "${record.task.id}" as rendered now; pass the task folder the episode ran (--task-dir), unchanged`,
    );
  }
  return {
    episodeId: record.episodeId,
    taskId: record.task.id,
    split,
    team: record.workflowHash !== null || record.teacher,
    prompt,
    bareTask,
    threads,
    hostPaths: hostPathReplacements(record, threads),
  };
}

/** The episode's threads; rebuilt from its proxy log, forged ones marked, when it has no `threads.jsonl`. */
async function readThreads(directory: string, episodePrompt: string): Promise<Thread[]> {
  const threadsFile = episodePath(directory, 'threads');
  if (await isFile(threadsFile)) return readJsonLines(threadsFile, Thread, 'a thread');
  const logFile = episodePath(directory, 'proxyLog');
  if (await isFile(logFile)) return buildThreads(await readProxyLog(logFile), { episodePrompt });
  throw new UserError(
    `${directory}: neither ${episodeFiles.threads} nor ${episodeFiles.proxyLog}; is this an episode directory?`,
  );
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`${file}: cannot read it (${errorMessage(error)}); is this an episode directory?`, {
      cause: error,
    });
  }
}
