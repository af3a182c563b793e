import { join } from 'node:path';

import { evaluationPath } from '../store/run-paths.js';

/**
 * Every step key of the studies (evaluation, students, benchmark), built in one place. A key names a step in the
 * run's `mass.db`: a resumed run finds its finished work by these exact strings, so none may change (the tests pin
 * them); a new kind of work gets its key here.
 */

/** `evaluation/<name>`: the prefix of an evaluation's keys, and its folder. */
export function evaluationBase(name: string): string {
  return evaluationPath(name);
}

/** `<base>/episode/<label>/<task>/<condition>/<replicate>`: one evaluation episode. */
export function evaluationEpisodeKey(
  base: string,
  episode: { label: string; task: string; condition: string; replicate: number },
): string {
  return `${base}/episode/${episode.label}/${episode.task}/${episode.condition}/${episode.replicate}`;
}

/** `<base>/grade/<episode id>`: the oracle on one episode (an evaluation's, or a run of the loop's collections). */
export function gradeKey(base: string, episodeId: string): string {
  return `${base}/grade/${episodeId}`;
}

/** What a judgment key names besides its judge and seed. */
export type JudgedItem =
  /** An evaluation pair: `<base>/judgment/<candidate>-vs-<baseline>/<task>/<condition>/<replicate>/…`. */
  | {
      kind: 'pair';
      candidate: string;
      baseline: string;
      task: string;
      condition: string;
      replicate: number;
    }
  /** A sampled match of a generation's tournament: `<base>/tournament/<generation>/<task>/<match>/…`. */
  | { kind: 'tournament'; generation: string; task: string; match: number }
  /** A searched version against its search's reference: `<base>/search-coverage/<generation>/<task>/<version>/…`. */
  | { kind: 'search-coverage'; generation: string; task: string; version: string }
  /** A round's team run against its single-agent run of the same seed: `team-vs-single/<generation>/<task>/<seed>/…`. */
  | { kind: 'team-vs-single'; generation: string; task: string; seed: number };

/** One judge with one seed on one item (`base` unused by team-vs-single, whose keys sit at the run's top). */
export function judgmentKey(base: string, item: JudgedItem, judge: string, seed: number): string {
  switch (item.kind) {
    case 'pair':
      return `${base}/judgment/${item.candidate}-vs-${item.baseline}/${item.task}/${item.condition}/${item.replicate}/${judge}/${seed}`;
    case 'tournament':
      return `${base}/tournament/${item.generation}/${item.task}/${item.match}/${judge}/${seed}`;
    case 'search-coverage':
      return `${base}/search-coverage/${item.generation}/${item.task}/${item.version}/${judge}/${seed}`;
    case 'team-vs-single':
      return `${TEAM_VS_SINGLE}/${item.generation}/${item.task}/${item.seed}/${judge}/${seed}`;
  }
}

/** The folder and key prefix of a students experiment's team-against-single judgments. */
export const TEAM_VS_SINGLE = 'team-vs-single';

/** `students/<student>/dataset` and `students/<student>/train`: a student's training data, and its training. */
export function studentKey(student: string, what: 'dataset' | 'train'): string {
  return `students/${student}/${what}`;
}

/** `benchmarks/<benchmark>`: the prefix of a benchmark's keys, and its folder. */
export function benchmarkBase(benchmark: string): string {
  return join('benchmarks', benchmark);
}

/**
 * `benchmarks/<benchmark>/<trial|verify>/<agent>/<label>/<task>/<trial>[/retry-<n>]`: a trial, or its verification
 * (a container trial's one step is its `verify`); `attempt` > 0: the how-manieth rerun after infrastructure lost it.
 */
export function benchmarkTrialKey(
  benchmark: string,
  kind: 'trial' | 'verify',
  trial: { agent: string; label: string; task: string; trial: number; attempt?: number },
): string {
  const retry = trial.attempt ? `/retry-${trial.attempt}` : '';
  return `${benchmarkBase(benchmark)}/${kind}/${trial.agent}/${trial.label}/${trial.task}/${trial.trial}${retry}`;
}

/** `benchmarks/<benchmark>/image/<task>`: a task's container image, built or pulled once. */
export function benchmarkImageKey(benchmark: string, task: string): string {
  return `${benchmarkBase(benchmark)}/image/${task}`;
}
