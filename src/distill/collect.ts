import { join } from 'node:path';

import type { EpisodeOptions, EpisodeResult } from '../episode/run-episode.js';
import { runEpisodes, type EpisodeOutcome } from '../episode/run-episodes.js';

/**
 * Collection for the outer loop: the champion workflow run `runs` times (default 18) on the same data, with distinct
 * sampling seeds. When fewer succeed than selection needs, bounded top-ups run instead of aborting (the official code
 * stops on a missing 16th success). Episodes live at `<outDir>/<prefix>-<index>` with sampling seed
 * `firstSeed + index`, so a re-run skips what is finished and redoes what is half done. A spent budget
 * (`BudgetExhaustedError` from `runEpisode`) is no failed episode: it stops the collection (see `runEpisodes`).
 */

export interface CollectionOptions {
  /**
   * Everything of an episode but its sampling seed and directory: task, data seed, champion workflow, teacher
   * directive, model… The data seed is required: every run of the task starts from the same workspace.
   */
  episode: Omit<EpisodeOptions, 'seed' | 'outDir' | 'dataSeed'> & { dataSeed: number };
  outDir: string;
  /** Episode directory names are `<prefix>-<index>`. */
  prefix: string;
  runs?: number;
  /** Successes that selection needs (default 16). */
  needed?: number;
  /** At most this many runs beyond `runs` (default 6). */
  maxTopUps?: number;
  firstSeed?: number;
  concurrency?: number;
  /** Runs one episode (default: in this process); an episode back-end's, to run them elsewhere. */
  runEpisode?: (episode: EpisodeOptions) => Promise<EpisodeResult>;
  /** Called as each episode finishes (or is found finished), in the order they finish. */
  onEpisodeFinished?: (episode: CollectedEpisode) => void;
}

export interface CollectedEpisode {
  episodeId: string;
  dir: string;
  /** The sampling seed. */
  seed: number;
  status: 'success' | 'failure' | 'error';
  /** Why it failed: the failure kind and detail, or the error that stopped it. */
  reason: string | null;
}

export interface Collection {
  episodes: CollectedEpisode[];
  successes: number;
  topUps: number;
  /** Enough successes for selection. */
  enough: boolean;
}

export async function collectChampionRuns(options: CollectionOptions): Promise<Collection> {
  const runs = options.runs ?? 18;
  const needed = options.needed ?? 16;
  const maxTopUps = options.maxTopUps ?? 6;
  const firstSeed = options.firstSeed ?? 0;
  const episodes: CollectedEpisode[] = [];
  const runBatch = async (indices: number[]) => {
    const batch = indices.map((index) => ({
      ...options.episode,
      seed: firstSeed + index,
      outDir: join(options.outDir, `${options.prefix}-${index}`),
    }));
    const collected = (outcome: EpisodeOutcome, position: number): CollectedEpisode => {
      const { seed, outDir } = batch[position]!;
      const episodeId = `${options.prefix}-${indices[position]}`;
      if (!outcome.ok)
        return { episodeId, dir: outDir, seed, status: 'error', reason: outcome.error.message };
      const { record } = outcome.result;
      const reason = record.failure ? `${record.failure.kind}: ${record.failure.detail}` : null;
      return { episodeId, dir: outDir, seed, status: record.status, reason };
    };
    const outcomes = await runEpisodes(batch, {
      concurrency: options.concurrency ?? 4,
      run: options.runEpisode,
      onFinished: (outcome, position) => options.onEpisodeFinished?.(collected(outcome, position)),
    });
    episodes.push(...outcomes.map(collected));
  };

  await runBatch(Array.from({ length: runs }, (_, index) => index));
  let topUps = 0;
  const successes = () => episodes.filter((episode) => episode.status === 'success').length;
  while (successes() < needed && topUps < maxTopUps) {
    const count = Math.min(needed - successes(), maxTopUps - topUps);
    await runBatch(Array.from({ length: count }, (_, offset) => runs + topUps + offset));
    topUps += count;
  }
  return { episodes, successes: successes(), topUps, enough: successes() >= needed };
}
