import type { Selection } from '../records/selection.js';

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
