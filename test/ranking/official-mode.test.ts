import { describe, expect, it } from 'vitest';

import { fitBradleyTerry, type Match } from '../../src/ranking/index.js';
import { newtonMap } from './support.js';

const matches: Match[] = [
  { a: 'a', b: 'b', winner: 'a' },
  { a: 'b', b: 'a', winner: 'b' },
  { a: 'a', b: 'c', winner: 'a' },
  { a: 'b', b: 'c', winner: 'tie' },
  { a: 'c', b: 'd', winner: 'a' },
];
const players = ['a', 'b', 'c', 'd'];

/** The official update as issue 6 describes it: prior wins over `prior` virtual games, then mean strength 1. */
function officialStep(strength: Record<string, number>, prior: number): Record<string, number> {
  const wins: Record<string, number> = Object.fromEntries(players.map((id) => [id, prior]));
  const games: Record<string, number> = Object.fromEntries(
    players.map((id) => [id, prior / (strength[id]! + 1)]),
  );
  for (const { a, b, winner } of matches) {
    wins[a]! += winner === 'a' ? 1 : winner === 'tie' ? 0.5 : 0;
    wins[b]! += winner === 'b' ? 1 : winner === 'tie' ? 0.5 : 0;
    games[a]! += 1 / (strength[a]! + strength[b]!);
    games[b]! += 1 / (strength[a]! + strength[b]!);
  }
  const next = players.map((id) => wins[id]! / games[id]!);
  const mean = next.reduce((sum, value) => sum + value, 0) / players.length;
  return Object.fromEntries(players.map((id, index) => [id, next[index]! / mean]));
}

describe('official compatibility mode', () => {
  const official = fitBradleyTerry(matches, { mode: 'official' });
  const map = fitBradleyTerry(matches);

  it('converges to a fixed point of the official update, with strengths of mean 1', () => {
    expect(official).toMatchObject({ mode: 'official', converged: true });
    const strength = Object.fromEntries(players.map((id) => [id, Math.exp(official.scores[id]!)]));
    const mean = Object.values(strength).reduce((sum, value) => sum + value, 0) / players.length;
    expect(mean).toBeCloseTo(1, 12);
    const stepped = officialStep(strength, 0.5);
    for (const id of players) expect(stepped[id]).toBeCloseTo(strength[id]!, 9);
  });

  it('differs from the true maximum a posteriori of the prior it describes', () => {
    const reference = newtonMap(players, matches, 0.5);
    for (const id of players) expect(map.scores[id]).toBeCloseTo(reference.scores[id]!, 7);
    const largestGap = Math.max(...players.map((id) => Math.abs(official.scores[id]! - map.scores[id]!)));
    expect(largestGap).toBeGreaterThan(0.1);
    // The true fit is not a fixed point of the official update.
    const mapStrength = Object.fromEntries(players.map((id) => [id, Math.exp(map.scores[id]!)]));
    const stepped = officialStep(mapStrength, 0.5);
    expect(
      Math.max(...players.map((id) => Math.abs(Math.log(stepped[id]! / mapStrength[id]!)))),
    ).toBeGreaterThan(0.01);
  });

  it('lets a player who never lost run off: its prior has wins but no losses', () => {
    const played: Match[] = [];
    for (let round = 0; round < 10; round++) {
      played.push({ a: 'b', b: 'c', winner: 'a' }, { a: 'c', b: 'b', winner: 'a' });
    }
    played.push({ a: 'lucky', b: 'c', winner: 'a' });
    const lead = (scores: Record<string, number>): number => scores.lucky! - scores.b!;
    const trueFit = fitBradleyTerry(played);
    expect(trueFit.converged).toBe(true);
    expect(lead(trueFit.scores)).toBeLessThan(1.5);
    // Here nothing holds the official update: it diverges, and says so.
    const diverging = fitBradleyTerry(played, { mode: 'official', maxIterations: 500 });
    expect(diverging.converged).toBe(false);
    expect(lead(diverging.scores)).toBeGreaterThan(10);
    for (const value of Object.values(diverging.stderr)) expect(value).toBeGreaterThan(0);
    // With more players the rescaling holds it, far ahead of its true-fit place.
    const held: Match[] = [...played, { a: 'd', b: 'b', winner: 'a' }, { a: 'few', b: 'b', winner: 'b' }];
    for (let round = 0; round < 10; round++)
      held.push({ a: 'b', b: 'd', winner: round % 2 === 0 ? 'a' : 'b' });
    const official = fitBradleyTerry(held, { mode: 'official' });
    expect(official.converged).toBe(true);
    expect(lead(official.scores)).toBeGreaterThan(lead(fitBradleyTerry(held).scores) + 2);
  });

  it('with prior 0 is maximum likelihood, only scaled to mean strength 1', () => {
    const strongly: Match[] = [...matches, { a: 'd', b: 'a', winner: 'a' }];
    const likelihood = fitBradleyTerry(strongly, { prior: 0 });
    const scaled = fitBradleyTerry(strongly, { prior: 0, mode: 'official' });
    const offset = scaled.scores.a! - likelihood.scores.a!;
    for (const id of players) expect(scaled.scores[id]! - likelihood.scores[id]!).toBeCloseTo(offset, 8);
  });
});
