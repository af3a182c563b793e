import { z } from 'zod';

/**
 * Which of a task's ranked episodes become training data: ranks 1..train for training and the next `validation`
 * ranks for validation (the paper: 15 and 1 of 18), disjoint. Only successful, untampered episodes are eligible:
 * a failed run or one that changed a protected file is never trained on, whatever the judge thought of it.
 */

export const SelectionReason = z.enum(['train', 'validation', 'below-cut', 'failed', 'tampered', 'unranked']);
export type SelectionReason = z.infer<typeof SelectionReason>;

export const Selection = z.object({
  schemaVersion: z.literal(1),
  train: z.array(z.string()),
  validation: z.array(z.string()),
  /** Every episode with its rank among the eligible ones (null when not eligible) and the reason for its place. */
  decisions: z.array(
    z.object({
      episodeId: z.string(),
      rank: z.number().int().positive().nullable(),
      reason: SelectionReason,
    }),
  ),
  /** Fewer eligible episodes than train + validation: the caller should top up (collect more) before training. */
  short: z.number().int().nonnegative(),
});
export type Selection = z.infer<typeof Selection>;

export interface SelectionCandidate {
  episodeId: string;
  status: 'success' | 'failure';
  tampered: boolean;
}

export interface SelectionOptions {
  /** Default 15. */
  train?: number;
  /** Default 1. */
  validation?: number;
}

/** `ranking` is best first (a Bradley–Terry ranking); candidates missing from it are recorded as unranked. */
export function selectEpisodes(
  ranking: readonly string[],
  candidates: readonly SelectionCandidate[],
  options: SelectionOptions = {},
): Selection {
  const trainCount = options.train ?? 15;
  const validationCount = options.validation ?? 1;
  const byId = new Map(candidates.map((candidate) => [candidate.episodeId, candidate]));
  const decisions: Selection['decisions'] = [];
  const train: string[] = [];
  const validation: string[] = [];
  let eligibleRank = 0;
  for (const episodeId of ranking) {
    const candidate = byId.get(episodeId);
    if (!candidate) continue;
    if (candidate.tampered) {
      decisions.push({ episodeId, rank: null, reason: 'tampered' });
      continue;
    }
    if (candidate.status !== 'success') {
      decisions.push({ episodeId, rank: null, reason: 'failed' });
      continue;
    }
    eligibleRank++;
    const reason =
      train.length < trainCount ? 'train' : validation.length < validationCount ? 'validation' : 'below-cut';
    if (reason === 'train') train.push(episodeId);
    if (reason === 'validation') validation.push(episodeId);
    decisions.push({ episodeId, rank: eligibleRank, reason });
  }
  const ranked = new Set(ranking);
  for (const candidate of candidates) {
    if (!ranked.has(candidate.episodeId))
      decisions.push({ episodeId: candidate.episodeId, rank: null, reason: 'unranked' });
  }
  const short = Math.max(0, trainCount + validationCount - train.length - validation.length);
  return { schemaVersion: 1, train, validation, decisions, short };
}
