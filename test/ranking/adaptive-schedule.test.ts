import { describe, expect, it } from 'vitest';

import {
  adaptiveSchedule,
  ringSchedule,
  roundRobinSchedule,
  seededRandom,
  type Match,
} from '../../src/ranking/index.js';
import { ids, simulateMatches } from './support.js';

const players = ids(18);
// Close strengths near the cut (ranks 13–18), clear ones above it.
const truth = Object.fromEntries(
  players.map((id, index) => [id, index < 6 ? -0.1 * index : -1 - 0.3 * index]),
);

describe('adaptive schedule', () => {
  const matches = simulateMatches(truth, ringSchedule(players, { seed: 2 }), seededRandom(2));
  const batch = adaptiveSchedule({ players, matches, cut: 15, seed: 4 });

  it('proposes pairs straddling the cut, most uncertain first, within the batch and per-player limits', () => {
    const above = new Set(batch.fit.ranking.slice(0, 15));
    expect(batch.pairs.length).toBeGreaterThan(0);
    expect(batch.pairs.length).toBeLessThanOrEqual(6);
    for (const { first, second } of batch.pairs) expect(above.has(first)).not.toBe(above.has(second));
    const probabilities = batch.pairs.map((pair) => pair.wrongOrderProbability);
    expect(probabilities).toEqual([...probabilities].sort((left, right) => right - left));
    for (const probability of probabilities) expect(probability).toBeGreaterThanOrEqual(0.05);
    const uses = new Map<string, number>();
    for (const { first, second } of batch.pairs) {
      for (const id of [first, second]) uses.set(id, (uses.get(id) ?? 0) + 1);
    }
    expect(Math.max(...uses.values())).toBeLessThanOrEqual(2);
    // Only the window of 6 players on each side of the cut is considered.
    const nearCut = new Set(batch.fit.ranking.slice(9));
    for (const { first, second } of batch.pairs) expect(nearCut.has(first) && nearCut.has(second)).toBe(true);
  });

  it('is reproducible from the seed', () => {
    expect(adaptiveSchedule({ players, matches, cut: 15, seed: 4 }).pairs).toEqual(batch.pairs);
  });

  it('never proposes a pair that reached the cap', () => {
    const judged = new Set(matches.map(({ a, b }) => [a, b].sort().join(' ')));
    const capped = adaptiveSchedule({ players, matches, cut: 15, seed: 4, maxMeetings: 1, batchSize: 50 });
    expect(capped.pairs.length).toBeGreaterThan(0);
    for (const { first, second } of capped.pairs)
      expect(judged.has([first, second].sort().join(' '))).toBe(false);
  });

  it('shows a pair judged before in the opposite order', () => {
    const tied: Match[] = [
      { a: 'a', b: 'c', winner: 'tie' },
      { a: 'b', b: 'd', winner: 'tie' },
      { a: 'a', b: 'b', winner: 'tie' },
      { a: 'c', b: 'd', winner: 'tie' },
    ];
    const proposal = adaptiveSchedule({ players: [], matches: tied, cut: 2, seed: 1 });
    expect(proposal.fit.ranking).toEqual(['a', 'b', 'c', 'd']);
    const shown = proposal.pairs.map(({ first, second }) => `${first}-${second}`);
    expect(shown).toHaveLength(4);
    expect(shown).toContain('c-a');
    expect(shown).toContain('d-b');
  });

  it('proposes nothing once the cut is settled, and includes players without a match', () => {
    const strong = ids(15);
    const weak = ['weak-1', 'weak-2', 'weak-3'];
    const settled: Match[] = roundRobinSchedule([...strong, ...weak], { seed: 3 }).flatMap(
      ({ first, second }) => {
        const winner: Match['winner'] =
          weak.includes(first) === weak.includes(second) ? 'tie' : weak.includes(first) ? 'b' : 'a';
        return Array.from({ length: 3 }, () => ({ a: first, b: second, winner }));
      },
    );
    expect(adaptiveSchedule({ players: [], matches: settled, cut: 15, seed: 1 }).pairs).toEqual([]);
    const withNewcomer = adaptiveSchedule({ players: ['newcomer'], matches: settled, cut: 15, seed: 1 });
    expect(withNewcomer.fit.ranking).toContain('newcomer');
    expect(
      withNewcomer.pairs.some(({ first, second }) => first === 'newcomer' || second === 'newcomer'),
    ).toBe(true);
  });

  it('refuses a cut outside the field', () => {
    expect(() => adaptiveSchedule({ players, matches, cut: 18, seed: 1 })).toThrow(
      /cut 18 must be a whole number from 1 to 17/,
    );
    expect(() => adaptiveSchedule({ players, matches, cut: 15, seed: 1, batchSize: 0 })).toThrow(
      /batchSize 0/,
    );
  });
});
