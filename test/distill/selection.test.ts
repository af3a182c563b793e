import { describe, expect, it } from 'vitest';

import { selectEpisodes, type SelectionCandidate } from '../../src/distill/selection.js';
import { fitBradleyTerry } from '../../src/ranking/bradley-terry.js';
import { ringSchedule } from '../../src/ranking/schedules.js';

const ids = Array.from({ length: 18 }, (_, index) => `e${String(index).padStart(2, '0')}`);
const success = (episodeId: string): SelectionCandidate => ({
  episodeId,
  status: 'success',
  tampered: false,
});

describe('selection of ranked episodes', () => {
  it('takes ranks 1–15 for training and rank 16 for validation, disjoint, from a real Bradley–Terry ranking', () => {
    // The lower the index, the stronger: every pair of the ring is won by the lower index.
    const pairs = ringSchedule(ids, { opponents: 6, seed: 3 });
    const matches = pairs.map(({ first, second }) => ({
      a: first,
      b: second,
      winner: first < second ? ('a' as const) : ('b' as const),
    }));
    const fit = fitBradleyTerry(matches);
    const selection = selectEpisodes(fit.ranking, ids.map(success));
    expect(selection.train).toEqual(fit.ranking.slice(0, 15));
    expect(selection.validation).toEqual([fit.ranking[15]]);
    expect(selection.train).not.toContain(selection.validation[0]);
    expect(selection.decisions.filter((decision) => decision.reason === 'below-cut')).toHaveLength(2);
    expect(selection.short).toBe(0);
  });

  it('never selects a failed or tampered episode, moves the cut down, and says how many are missing', () => {
    const candidates = ids.map(success);
    candidates[0] = { ...candidates[0]!, status: 'failure' };
    candidates[1] = { ...candidates[1]!, tampered: true };
    candidates[2] = { ...candidates[2]!, status: 'failure' };
    const selection = selectEpisodes(ids, candidates);
    expect(selection.train).toEqual(ids.slice(3, 18));
    expect(selection.validation).toEqual([]);
    expect(selection.short).toBe(1);
    expect(selection.decisions.slice(0, 4)).toEqual([
      { episodeId: 'e00', rank: null, reason: 'failed' },
      { episodeId: 'e01', rank: null, reason: 'tampered' },
      { episodeId: 'e02', rank: null, reason: 'failed' },
      { episodeId: 'e03', rank: 1, reason: 'train' },
    ]);
  });

  it('takes other sizes, and records candidates the ranking does not mention', () => {
    const selection = selectEpisodes(['b', 'a'], [success('a'), success('b'), success('c')], {
      train: 1,
      validation: 1,
    });
    expect(selection).toMatchObject({ train: ['b'], validation: ['a'], short: 0 });
    expect(selection.decisions.at(-1)).toEqual({ episodeId: 'c', rank: null, reason: 'unranked' });
  });
});
