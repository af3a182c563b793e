import { describe, expect, it } from 'vitest';

import {
  fitBradleyTerry,
  ringSchedule,
  roundRobinSchedule,
  seededRandom,
  shuffled,
  type Match,
} from '../../src/ranking/index.js';
import { ids, newtonMap, simulateMatches, spearman } from './support.js';

function expectClose(
  actual: Record<string, number>,
  expected: Record<string, number>,
  tolerance: number,
): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [id, value] of Object.entries(expected)) {
    expect(Math.abs(actual[id]! - value), `${id}: ${actual[id]} vs ${value}`).toBeLessThan(tolerance);
  }
}

/** 12 players on an even grid of log-strengths, ring of 6 opponents, each pair judged `repetitions` times. */
function ringTournament(
  seed: number,
  repetitions: number,
  tieRate = 0.1,
): { players: string[]; matches: Match[] } {
  const players = ids(12);
  const random = seededRandom(seed);
  const truth = Object.fromEntries(players.map((id, index) => [id, (index - 5.5) / 3]));
  const pairs = ringSchedule(players, { seed });
  return { players, matches: simulateMatches(truth, pairs, random, { repetitions, tieRate }) };
}

describe('Bradley–Terry fit', () => {
  it('recovers the true order from matches simulated from known strengths', () => {
    const players = ids(30);
    const truth = Object.fromEntries(players.map((id, index) => [id, index / 7]));
    const pairs = roundRobinSchedule(players, { seed: 11 });
    const matches = simulateMatches(truth, pairs, seededRandom(11), { repetitions: 8, tieRate: 0.05 });
    const fit = fitBradleyTerry(matches);
    expect(fit.converged).toBe(true);
    expect(spearman(fit.scores, truth)).toBeGreaterThan(0.95);
    expect(fit.ranking.slice(0, 3)).toContain(players[29]);
    expect(fit.ranking.slice(-3)).toContain(players[0]);
  });

  it('recovers the order under the official 18-player ring with many repeated judgments', () => {
    const players = ids(18);
    const truth = Object.fromEntries(players.map((id, index) => [id, index / 4]));
    const matches = simulateMatches(truth, ringSchedule(players, { seed: 5 }), seededRandom(5), {
      repetitions: 40,
    });
    expect(spearman(fitBradleyTerry(matches).scores, truth)).toBeGreaterThan(0.9);
  });

  for (const prior of [0.5, 2]) {
    for (const algorithm of ['newman', 'minorise-maximise'] as const) {
      it(`equals an independent Newton fit of the posterior to 1e-6 (prior ${prior}, ${algorithm})`, () => {
        for (const seed of [1, 2, 3]) {
          const { players, matches } = ringTournament(seed, 3);
          const fit = fitBradleyTerry(matches, { prior, algorithm });
          const reference = newtonMap(players, matches, prior);
          expect(fit.converged).toBe(true);
          expectClose(fit.scores, reference.scores, 1e-6);
          expectClose(fit.stderr, reference.stderr, 1e-6);
        }
      });
    }
  }

  it('converges in a few steps when two players meet many times (updated all at once, they swap strengths every step)', () => {
    const matches = Array.from({ length: 192 }, (_, index) => ({
      a: 'L0',
      b: 'L1',
      winner: index % 3 === 0 ? ('a' as const) : index % 7 === 0 ? ('tie' as const) : ('b' as const),
    }));
    const fit = fitBradleyTerry(matches);
    expect(fit.converged).toBe(true);
    expect(fit.iterations).toBeLessThan(20);
    expectClose(fit.scores, newtonMap(['L0', 'L1'], matches, 0.5).scores, 1e-6);
  });

  it('equals an independent Newton fit of the likelihood to 1e-6 with prior 0, centred to mean 0', () => {
    const { players, matches } = ringTournament(4, 6, 0.2);
    const fit = fitBradleyTerry(matches, { prior: 0 });
    const reference = newtonMap(players, matches, 0);
    expectClose(fit.scores, reference.scores, 1e-6);
    expectClose(fit.stderr, reference.stderr, 1e-6);
    const mean = Object.values(fit.scores).reduce((sum, value) => sum + value, 0) / players.length;
    expect(Math.abs(mean)).toBeLessThan(1e-12);
  });

  it('reports the full inverse-Hessian errors for small fits and a diagonal lower bound above the limit', () => {
    const { matches } = ringTournament(6, 2);
    const exact = fitBradleyTerry(matches);
    const diagonal = fitBradleyTerry(matches, { exactStandardErrorsUpTo: 5 });
    expect(exact.stderrMethod).toBe('inverse-hessian');
    expect(diagonal.stderrMethod).toBe('diagonal-hessian');
    expect(diagonal.scores).toEqual(exact.scores);
    for (const id of Object.keys(exact.stderr)) {
      expect(diagonal.stderr[id]).toBeLessThanOrEqual(exact.stderr[id]!);
      expect(diagonal.stderr[id]).toBeGreaterThan(0.5 * exact.stderr[id]!);
    }
  });

  it('is deterministic: the row order changes neither the ranking nor the scores beyond rounding', () => {
    const { matches } = ringTournament(7, 2, 0.3);
    const fit = fitBradleyTerry(matches);
    const reordered = fitBradleyTerry(shuffled(matches, seededRandom(99)));
    expect(reordered.ranking).toEqual(fit.ranking);
    expectClose(reordered.scores, fit.scores, 1e-12);
    expect(fitBradleyTerry(matches)).toEqual(fit);
  });

  it('says so honestly when the iteration cap stops it before convergence', () => {
    const { matches } = ringTournament(8, 2);
    const capped = fitBradleyTerry(matches, { maxIterations: 2, algorithm: 'minorise-maximise' });
    expect(capped).toMatchObject({ iterations: 2, converged: false });
    const full = fitBradleyTerry(matches);
    expect(full.converged).toBe(true);
    expect(full.iterations).toBeLessThan(200);
  });

  it('breaks exact ties in score by id', () => {
    const matches: Match[] = [
      { a: 'c', b: 'top', winner: 'b' },
      { a: 'b', b: 'top', winner: 'b' },
      { a: 'a', b: 'top', winner: 'b' },
    ];
    expect(fitBradleyTerry(matches).ranking).toEqual(['top', 'a', 'b', 'c']);
  });
});
