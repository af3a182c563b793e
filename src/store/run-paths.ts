import { join } from 'node:path';

/**
 * The names of what a run directory and an episode directory hold, in one place: writers and readers (the loop, the
 * report, the viewer, the judge, distillation) name the same files through these. Paths of a run are relative to
 * the run directory, as `run.path(...)` and the report's `RunFiles` take them; an episode's are joined to its
 * directory.
 */

/** The files and folders of an episode directory. */
export const episodeFiles = {
  /** The episode record, written last: present means finished. */
  record: 'episode.json',
  prompt: 'prompt.md',
  /** The recording proxy's log, one row per model call. */
  proxyLog: 'requests.jsonl',
  /** The egress proxy's log, one row per request to the network (only when the task allows network). */
  egressLog: 'egress.jsonl',
  /** The conversations rebuilt from the proxy log. */
  threads: 'threads.jsonl',
  /** The harness's stream-json output. */
  harnessEvents: 'events.jsonl',
  harnessStderr: 'harness-stderr.log',
  workspace: 'workspace',
  home: 'home',
  sandbox: 'sandbox',
} as const;

export type EpisodeEntry = keyof typeof episodeFiles;

/** A file or folder of the episode in `episodeDirectory`, or a path below it (`workspace/results/x.csv`). */
export function episodePath(episodeDirectory: string, entry: EpisodeEntry, ...below: string[]): string {
  return join(episodeDirectory, episodeFiles[entry], ...below);
}

/** The files and folders directly in a run directory. */
export const runFiles = {
  config: 'config.yaml',
  database: 'mass.db',
  lock: 'mass.lock',
  /** Work lost because a model server was down, and redone. */
  outages: 'outages.jsonl',
  /** The judge's and optimizer's model calls in flight, for `mass status` (see `src/judge/open-model-calls.ts`). */
  modelCallsOpen: 'model-calls-open.json',
  rsiSummary: 'rsi-summary.json',
  /** The model registry (`train/registry.json`). */
  registry: join('train', 'registry.json'),
  /** Single episodes (`mass episode` in a run, the collection of distillation). */
  episodes: 'episodes',
  search: 'search',
  distill: 'distill',
  evaluation: 'evaluation',
  train: 'train',
  /** Analyses of the run's records (`mass analyze`) and what they cache. */
  analysis: 'analysis',
  /** The episode queue's jobs as the coordinator issued them, and their workers' starts and finishes. */
  queue: 'queue',
} as const;

/** An episode of the run outside any evaluation: `episodes/<id>`. */
export function runEpisodePath(episodeId: string): string {
  return join(runFiles.episodes, episodeId);
}

/** One task's search in one generation: `search/<generation>/<task>`. */
export function searchTaskPath(generation: string, task: string, ...below: string[]): string {
  return join(runFiles.search, generation, task, ...below);
}

/** The finished search of a task (`search/<generation>/<task>/result.json`). */
export function searchResultPath(generation: string, task: string): string {
  return searchTaskPath(generation, task, 'result.json');
}

/** The files of one workflow version of a search, under `search/<generation>/<task>/<version>`. */
export const searchVersionFiles = {
  /** The design of the version. */
  workflow: 'workflow.json',
  /** The optimizer call that proposed the version. */
  optimizer: 'optimizer.json',
  /** The pairwise judgments against the reference, one file each. */
  judgments: 'judgments',
} as const;

/** One workflow version of a search: `search/<generation>/<task>/<version>`, or a file of it. */
export function searchVersionPath(
  generation: string,
  task: string,
  version: string,
  entry?: keyof typeof searchVersionFiles,
): string {
  const base = searchTaskPath(generation, task, version);
  return entry === undefined ? base : join(base, searchVersionFiles[entry]);
}

/**
 * The reruns that measure a search's noise (`search.repeats`), beside the search they leave untouched: the record
 * `search/<generation>/<task>/repeats.json` and its judgments in `search/<generation>/<task>/repeats/judgments/`,
 * a folder named as a version's so that whatever counts a search's judgments counts these too.
 */
export const searchRepeatsFiles = {
  record: 'repeats.json',
  folder: 'repeats',
  judgments: 'judgments',
} as const;

/** A task's repeats record, or with `judgment`, the file of one judgment between two of its runs. */
export function searchRepeatsPath(generation: string, task: string, judgment?: string): string {
  return judgment === undefined
    ? searchTaskPath(generation, task, searchRepeatsFiles.record)
    : searchTaskPath(generation, task, searchRepeatsFiles.folder, searchRepeatsFiles.judgments, judgment);
}

/** The search noise of a generation over its tasks: `search/<generation>/noise.json`. */
export function searchNoisePath(generation: string): string {
  return join(runFiles.search, generation, 'noise.json');
}

/** The files of one task's outer loop in a generation, under `distill/<generation>/<task>`. */
export const outerLoopFiles = {
  collection: 'collection.json',
  ranking: 'ranking.json',
  selection: 'selection.json',
  matches: 'matches.jsonl',
  /** The tournament's judgments, one file each. */
  judgments: 'matches',
} as const;

/** The folder of a generation's training data, beside its tasks under `distill/<generation>`. */
export const DATASET_FOLDER = 'dataset';

/** One task's outer loop in one generation: `distill/<generation>/<task>`, or a file of it. */
export function distillTaskPath(generation: string, task: string, ...below: string[]): string {
  return join(runFiles.distill, generation, task, ...below);
}

/** A generation's training data: `distill/<generation>/dataset`, or a file of it. */
export function datasetPath(generation: string, ...below: string[]): string {
  return join(runFiles.distill, generation, DATASET_FOLDER, ...below);
}

/** The files and folders of one evaluation, under `evaluation/<name>`. */
export const evaluationFiles = {
  summary: 'summary.json',
  grades: 'grades.jsonl',
  judgments: 'judgments.jsonl',
  episodes: 'episodes',
  outages: 'outages.jsonl',
} as const;

/** One evaluation: `evaluation/<name>`, or a file or folder of it. */
export function evaluationPath(name: string, entry?: keyof typeof evaluationFiles): string {
  return entry === undefined
    ? join(runFiles.evaluation, name)
    : join(runFiles.evaluation, name, evaluationFiles[entry]);
}

/** Where a generation's workflow information (`mass analyze workflows`) is written: `analysis/workflows/<generation>.json`. */
export function workflowInformationPath(generation: string): string {
  return join(runFiles.analysis, 'workflows', `${generation}.json`);
}

/** Embeddings fetched from an endpoint for one model, one line per text hash: `analysis/embeddings/<key>.jsonl`. */
export function embeddingCachePath(key: string): string {
  return join(runFiles.analysis, 'embeddings', `${key}.jsonl`);
}

/** The folder, under a task's `distill/<generation>/<task>/`, of its single-agent collection, ranking and selection. */
export const SINGLE_AGENT_FOLDER = 'single-agent';

/** `students/<name>/`: an experiment's folder, itself a run directory (its registry holds the base and the students). */
export const STUDENTS_FOLDER = 'students';
