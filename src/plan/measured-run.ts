import { lstat, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

import { EpisodeRecord } from '../records/episode-record.js';
import { UserError } from '../errors.js';
import { PairwiseJudgmentRecord } from '../records/judgment-record.js';
import { OptimizerCallRecord } from '../records/optimizer-outcome.js';
import { episodePath, evaluationPath, runFiles, searchVersionFiles } from '../store/run-paths.js';
import type { StageWork } from './plan-types.js';
import { folderPaths, jsonFilePaths } from './run-folders.js';
import { recordedWork } from './recorded-work.js';
import {
  meanStepSeconds,
  stageWallTimes,
  trainingSteps,
  type StageWallTime,
  type TrainingMeasure,
} from './run-wall-times.js';

/** Means of one kind of work in a finished run: per episode for the team, per model call for the judge and optimizer. */
export interface MeasuredMeans {
  /** Episodes, or model calls, measured. */
  samples: number;
  promptTokens: number;
  completionTokens: number;
  /** Wall seconds: an episode's, or a call's latency. */
  seconds: number;
}

/** What `mass plan --like <run>` reads from a finished run. */
export interface MeasuredRun {
  /** The run's name, as its figures' basis says it (`measured in <name>`). */
  name: string;
  directory: string;
  episode: MeasuredMeans & { bytes: number };
  judgeCall: MeasuredMeans;
  /** The mean seconds of the loop's judgment steps (the search's and the tournaments'); null when it judged none. */
  judgmentSeconds: number | null;
  optimizerCall: MeasuredMeans;
  training: TrainingMeasure | null;
  stages: StageWallTime[];
  /** What its records say each stage did (`recordedWork`). */
  recorded: StageWork[];
}

/** The loop's judgment steps: a search version's judge step, a tournament's match. */
const LOOP_JUDGMENT_STEP = /^(search\/.+\/judge|distill\/.+\/match\/\d+)$/;

interface Sum {
  samples: number;
  promptTokens: number;
  completionTokens: number;
  seconds: number;
}

/** Reads a finished run's episodes, judgments, optimizer calls and step times; refuses a run that has no episode. */
export async function measureRun(directory: string): Promise<MeasuredRun> {
  const absolute = resolve(directory);
  const episode = { ...zero(), bytes: 0 };
  const judge = zero();
  const optimizer = zero();
  const episodeDirs = [
    ...(await folderPaths(join(absolute, runFiles.episodes))),
    ...(await evaluationEpisodeDirs(absolute)),
  ];
  for (const dir of episodeDirs) {
    const record = await EpisodeRecord.readIfPresent(episodePath(dir, 'record'));
    if (!record) continue;
    add(
      episode,
      record.usage.total.promptTokens,
      record.usage.total.completionTokens,
      record.timings.durationMs,
    );
    episode.bytes += await diskBytes(dir);
  }
  if (episode.samples === 0) {
    throw new UserError(
      `--like ${directory}: no finished episode there (episodes/*/episode.json); name a finished run`,
    );
  }
  for (const file of await judgmentFiles(absolute)) {
    const record = await PairwiseJudgmentRecord.read(file);
    for (const attempt of record.judgments.flatMap((single) => single.attempts)) {
      add(judge, attempt.usage?.promptTokens ?? 0, attempt.usage?.completionTokens ?? 0, attempt.latencyMs);
    }
  }
  for (const file of await optimizerFiles(absolute)) {
    const record = await OptimizerCallRecord.read(file);
    for (const attempt of record.outcome.attempts) {
      add(
        optimizer,
        attempt.usage?.promptTokens ?? 0,
        attempt.usage?.completionTokens ?? 0,
        attempt.durationMs,
      );
    }
  }
  return {
    name: basename(absolute),
    directory: absolute,
    episode: { ...means(episode), bytes: episode.bytes / episode.samples },
    judgeCall: means(judge),
    judgmentSeconds: meanStepSeconds(absolute, LOOP_JUDGMENT_STEP)?.seconds ?? null,
    optimizerCall: means(optimizer),
    training: trainingSteps(absolute),
    stages: stageWallTimes(absolute),
    recorded: await recordedWork(absolute),
  };
}

function zero(): Sum {
  return { samples: 0, promptTokens: 0, completionTokens: 0, seconds: 0 };
}

function add(sum: Sum, prompt: number, completion: number, milliseconds: number): void {
  sum.samples++;
  sum.promptTokens += prompt;
  sum.completionTokens += completion;
  sum.seconds += milliseconds / 1000;
}

function means(sum: Sum): MeasuredMeans {
  const per = Math.max(sum.samples, 1);
  return {
    samples: sum.samples,
    promptTokens: sum.promptTokens / per,
    completionTokens: sum.completionTokens / per,
    seconds: sum.seconds / per,
  };
}

/** The search's judgments (`search/<L>/<task>/<version>/judgments/*.json`) and the tournaments' (`distill/<L>/<task>/matches/*.json`). */
async function judgmentFiles(run: string): Promise<string[]> {
  const files: string[] = [];
  for (const version of await depth(join(run, runFiles.search), 3)) {
    files.push(...(await jsonFilePaths(join(version, searchVersionFiles.judgments))));
  }
  for (const task of await depth(join(run, runFiles.distill), 2)) {
    files.push(...(await jsonFilePaths(join(task, 'matches'))));
  }
  return files;
}

async function optimizerFiles(run: string): Promise<string[]> {
  const versions = await depth(join(run, runFiles.search), 3);
  const files = await Promise.all(
    versions.map(async (version) =>
      (await jsonFilePaths(version)).filter((file) => basename(file) === searchVersionFiles.optimizer),
    ),
  );
  return files.flat();
}

async function evaluationEpisodeDirs(run: string): Promise<string[]> {
  const evaluations = await folderPaths(join(run, runFiles.evaluation));
  const dirs = await Promise.all(
    evaluations.map((dir) => folderPaths(join(run, evaluationPath(basename(dir)), 'episodes'))),
  );
  return dirs.flat();
}

/** The folders `levels` below `folder`. */
async function depth(folder: string, levels: number): Promise<string[]> {
  let current = [folder];
  for (let level = 0; level < levels; level++) {
    current = (await Promise.all(current.map(folderPaths))).flat();
  }
  return current;
}

/** Bytes of a folder's regular files, links not followed. */
async function diskBytes(folder: string): Promise<number> {
  let total = 0;
  let found;
  try {
    found = await readdir(folder, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of found) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await diskBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}
