import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { SINGLE_AGENT_FOLDER } from '../store/run-paths.js';
import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../records/judgment-record.js';
import { TaskSearchRecord, type TaskSearchResult } from '../records/search-records.js';
import type { RunFiles } from '../store/run-files.js';
import {
  DATASET_FOLDER,
  distillTaskPath,
  outerLoopFiles,
  runEpisodePath,
  runFiles,
  searchResultPath,
  searchTaskPath,
  searchVersionPath,
} from '../store/run-paths.js';
import { isRunName } from './view-paths.js';

/**
 * What the pages need to find their way around a run without reading it whole: folder names, and only the few
 * records a page is about. A run with thousands of episodes is listed, never read, to show its first page.
 */

/** The generations that have a search or an outer loop, in name order (L0, L1, …). */
export async function generationNames(files: RunFiles): Promise<string[]> {
  const names = new Set([
    ...(await files.folders(runFiles.search)),
    ...(await files.folders(runFiles.distill)),
  ]);
  return [...names].filter(isRunName).sort(compareNames);
}

/** The tasks of one generation: searched, or in its outer loop (the dataset folder is not a task). */
export async function taskNames(files: RunFiles, generation: string): Promise<string[]> {
  const names = new Set([
    ...(await files.folders(join(runFiles.search, generation))),
    ...(await files.folders(join(runFiles.distill, generation))).filter((name) => name !== DATASET_FOLDER),
  ]);
  return [...names].filter(isRunName).sort(compareNames);
}

/** Folder names under `relative`, without reading any of them; none when it does not exist. */
export async function folderNames(root: string, relative: string): Promise<string[]> {
  try {
    const entries = await readdir(join(root, relative), { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() && isRunName(entry.name))
      .map((entry) => entry.name)
      .sort(compareNames);
  } catch {
    return [];
  }
}

/** Numbers in names compare as numbers: v2 before v10, L2-…-9 before L2-…-10. */
export function compareNames(a: string, b: string): number {
  return collator.compare(a, b);
}

// One collator for every comparison: `localeCompare` with options builds a new one per call.
const collator = new Intl.Collator('en', { numeric: true });

export function readSearch(
  files: RunFiles,
  generation: string,
  task: string,
): Promise<TaskSearchResult | undefined> {
  return files.record(TaskSearchRecord, searchResultPath(generation, task), 'the search has not finished');
}

/**
 * The episode folder of a search judgment's label (`reference`, `v0`, `v3`): from `result.json` when the search
 * finished, else from the naming the search uses for its episodes.
 */
export function searchLabelDir(
  search: TaskSearchResult | undefined,
  generation: string,
  task: string,
  label: string,
): string {
  if (search) {
    if (label === 'reference') return search.reference.dir;
    const dir = search.iterations.find((iteration) => iteration.version === label)?.episode?.dir;
    if (dir) return dir;
  }
  return runEpisodePath(`${generation}-${task}-${label}`);
}

export interface StoredJudgment {
  /** Relative to the run directory. */
  file: string;
  record: PairwiseJudgment;
  /** The episode folders of `x` and `y`. */
  xDir: string;
  yDir: string;
}

/** Every pairwise judgment of a task's search (`search/<g>/<t>/v*\/judgments/*.json`), with its episodes. */
export async function searchJudgments(
  files: RunFiles,
  generation: string,
  task: string,
): Promise<StoredJudgment[]> {
  const search = await readSearch(files, generation, task);
  const judgments: StoredJudgment[] = [];
  for (const version of await files.folders(searchTaskPath(generation, task))) {
    const folder = searchVersionPath(generation, task, version, 'judgments');
    for (const name of await files.files(folder, '.json')) {
      const file = join(folder, name);
      const record = await files.record(PairwiseJudgmentRecord, file);
      if (!record) continue;
      judgments.push({
        file,
        record,
        xDir: searchLabelDir(search, generation, task, record.x.label),
        yDir: searchLabelDir(search, generation, task, record.y.label),
      });
    }
  }
  return judgments;
}

/**
 * Every judged match of a task's tournaments (`distill/<g>/<t>/matches/*.json`, then its single-agent collection's
 * `distill/<g>/<t>/single-agent/matches/*.json`); their labels are episode ids.
 */
export async function tournamentJudgments(
  files: RunFiles,
  generation: string,
  task: string,
): Promise<StoredJudgment[]> {
  const judgments: StoredJudgment[] = [];
  for (const folder of [[], [SINGLE_AGENT_FOLDER]]) {
    const base = distillTaskPath(generation, task, ...folder, outerLoopFiles.judgments);
    const names = (await files.files(base, '.json')).sort(compareNames);
    for (const name of names) {
      const file = join(base, name);
      const record = await files.record(PairwiseJudgmentRecord, file);
      if (!record) continue;
      judgments.push({
        file,
        record,
        xDir: runEpisodePath(record.x.label),
        yDir: runEpisodePath(record.y.label),
      });
    }
  }
  return judgments;
}

/** The link to the comparison page of two episode folders. */
export function compareUrl(xDir: string, yDir: string): string {
  return `/compare?x=${encodeURIComponent(xDir)}&y=${encodeURIComponent(yDir)}`;
}
