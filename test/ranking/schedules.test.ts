import { describe, expect, it } from 'vitest';

import { ringSchedule, roundRobinSchedule, type Pair } from '../../src/ranking/index.js';
import { componentCount, ids } from './support.js';

function pairKeys(pairs: readonly Pair[]): Set<string> {
  return new Set(pairs.map(({ first, second }) => [first, second].sort().join(' vs ')));
}

function countPer(players: readonly string[], pairs: readonly Pair[], side?: 'first'): Map<string, number> {
  const counts = new Map(players.map((id) => [id, 0]));
  for (const pair of pairs) {
    counts.set(pair.first, counts.get(pair.first)! + 1);
    if (side !== 'first') counts.set(pair.second, counts.get(pair.second)! + 1);
  }
  return counts;
}

describe('ring schedule', () => {
  const players = ids(18);

  it('gives 18 players and 6 opponents 54 distinct pairs; everyone plays 6, is shown first 3 times; connected', () => {
    const pairs = ringSchedule(players, { seed: 1 });
    expect(pairs).toHaveLength(54);
    expect(pairKeys(pairs).size).toBe(54);
    expect([...countPer(players, pairs).values()]).toEqual(new Array(18).fill(6));
    expect([...countPer(players, pairs, 'first').values()]).toEqual(new Array(18).fill(3));
    expect(componentCount(players, pairs)).toBe(1);
    for (const { first, second } of pairs) expect(first).not.toBe(second);
  });

  it('is reproducible from the seed, different across seeds, and independent of the order ids are given in', () => {
    const pairs = ringSchedule(players, { seed: 42 });
    expect(ringSchedule(players, { seed: 42 })).toEqual(pairs);
    expect(ringSchedule([...players].reverse(), { seed: 42 })).toEqual(pairs);
    expect(pairKeys(ringSchedule(players, { seed: 43 }))).not.toEqual(pairKeys(pairs));
  });

  it('holds its guarantees for every even player count and opponent count below n − 1', () => {
    for (let count = 3; count <= 16; count++) {
      for (let opponents = 2; opponents < count - 1; opponents++) {
        if (opponents % 2 === 1 && count % 2 === 1) continue;
        const group = ids(count);
        const pairs = ringSchedule(group, { opponents, seed: count * 100 + opponents });
        const label = `${count} players, ${opponents} opponents`;
        expect(pairs, label).toHaveLength((count * opponents) / 2);
        expect(pairKeys(pairs).size, label).toBe(pairs.length);
        expect(new Set(countPer(group, pairs).values()), label).toEqual(new Set([opponents]));
        expect(componentCount(group, pairs), label).toBe(1);
      }
    }
  });

  it('adds the player opposite on the ring for an odd number of opponents', () => {
    const pairs = ringSchedule(players, { opponents: 5, seed: 3 });
    expect(pairs).toHaveLength(45);
    expect(new Set(countPer(players, pairs).values())).toEqual(new Set([5]));
  });

  it('falls back to the round robin when every player would meet everyone', () => {
    const few = ids(6);
    expect(ringSchedule(few, { opponents: 5, seed: 9 })).toEqual(roundRobinSchedule(few, { seed: 9 }));
    expect(ringSchedule(few, { opponents: 40, seed: 9 })).toHaveLength(15);
    expect(ringSchedule(['a', 'b'], { seed: 1 })).toHaveLength(1);
  });

  it('refuses impossible or useless requests with the reason', () => {
    expect(() => ringSchedule(ids(17), { opponents: 5, seed: 1 })).toThrow(
      /17 players cannot each meet an odd number \(5\) of opponents/,
    );
    expect(() => ringSchedule(players, { opponents: 1, seed: 1 })).toThrow(/couples that are never compared/);
    expect(() => ringSchedule(players, { opponents: 2.5, seed: 1 })).toThrow(/whole number/);
    expect(() => ringSchedule(['a'], { seed: 1 })).toThrow(/at least 2 players/);
    expect(() => ringSchedule(['a', 'b', 'a'], { seed: 1 })).toThrow(/"a" is listed twice/);
  });
});

describe('round robin', () => {
  for (const count of [17, 18]) {
    it(`meets every pair once for ${count} players, with the first position spread evenly`, () => {
      const players = ids(count);
      const pairs = roundRobinSchedule(players, { seed: 5 });
      expect(pairs).toHaveLength((count * (count - 1)) / 2);
      expect(pairKeys(pairs).size).toBe(pairs.length);
      expect(new Set(countPer(players, pairs).values())).toEqual(new Set([count - 1]));
      const firsts = [...countPer(players, pairs, 'first').values()];
      expect(Math.max(...firsts) - Math.min(...firsts)).toBeLessThanOrEqual(count % 2 === 1 ? 0 : 1);
    });
  }
});
