import { UserError } from '../errors.js';
import { compareIds } from './matches.js';
import { seededRandom, shuffled, type Random } from './seeded-random.js';

/** One judgment to make: `first` is shown to the judge as A, `second` as B (judges have position bias). */
export interface Pair {
  first: string;
  second: string;
}

export interface RingOptions {
  /** Opponents per player. Default 6 (the official schedule: 54 pairs for 18 players). */
  opponents?: number;
  seed: number;
}

/**
 * The seeded ring tournament. Players are sorted (so only the set of ids matters), shuffled with
 * the seed into a ring, and each meets its k/2 nearest neighbours on each side: n·k/2 distinct
 * pairs, every player plays exactly k, and the ring itself keeps the schedule connected. Each player
 * is shown first in exactly k/2 of its matches (the pair (ring[i], ring[i + d]) shows ring[i]
 * first), so position bias falls evenly.
 *
 * - k odd, n even: neighbours at distances 1 … (k−1)/2 plus the player opposite on the ring, that
 *   last pair in a seeded random order.
 * - k odd, n odd: refused; no schedule gives every player an odd number of opponents.
 * - k ≥ n − 1: nobody can meet more than n − 1 others, so the schedule is the full round robin.
 * - k = 1 (with n > 2): refused; it would pair players off into couples never compared with each other.
 */
export function ringSchedule(players: readonly string[], options: RingOptions): Pair[] {
  const opponents = options.opponents ?? 6;
  validatePlayers(players);
  if (!Number.isSafeInteger(opponents) || opponents < 1) {
    throw new UserError(`ring schedule: ${opponents} opponents: use a whole number of at least 2`);
  }
  const count = players.length;
  if (opponents >= count - 1) return roundRobinSchedule(players, { seed: options.seed });
  if (opponents === 1) {
    throw new UserError(
      'ring schedule: 1 opponent each pairs players off into couples that are never compared with each other; use at least 2',
    );
  }
  if (opponents % 2 === 1 && count % 2 === 1) {
    throw new UserError(
      `ring schedule: ${count} players cannot each meet an odd number (${opponents}) of opponents; use an even number of opponents or add a player`,
    );
  }
  const random = seededRandom(options.seed);
  const ring = shuffled([...players].sort(compareIds), random);
  return circulantPairs(ring, Math.floor(opponents / 2), opponents % 2 === 1, random);
}

/**
 * Every pair once: n(n−1)/2 judgments. Built like the ring (seeded ring order, pair (ring[i], ring[i + d])
 * shows ring[i] first), so with n odd each player is first in exactly (n−1)/2 matches; with n even
 * the opposite pairs get a seeded random order.
 */
export function roundRobinSchedule(players: readonly string[], options: { seed: number }): Pair[] {
  validatePlayers(players);
  const random = seededRandom(options.seed);
  const ring = shuffled([...players].sort(compareIds), random);
  return circulantPairs(ring, Math.floor((ring.length - 1) / 2), ring.length % 2 === 0, random);
}

function circulantPairs(
  ring: readonly string[],
  maxDistance: number,
  opposite: boolean,
  random: Random,
): Pair[] {
  const count = ring.length;
  const pairs: Pair[] = [];
  for (let distance = 1; distance <= maxDistance; distance++) {
    for (let position = 0; position < count; position++) {
      pairs.push({ first: ring[position]!, second: ring[(position + distance) % count]! });
    }
  }
  if (opposite) {
    for (let position = 0; position < count / 2; position++) {
      pairs.push(orient(ring[position]!, ring[position + count / 2]!, random));
    }
  }
  return pairs;
}

/** A seeded coin decides who is shown first. */
export function orient(one: string, other: string, random: Random): Pair {
  return random() < 0.5 ? { first: one, second: other } : { first: other, second: one };
}

function validatePlayers(players: readonly string[]): void {
  if (players.length < 2) {
    throw new UserError(`a schedule needs at least 2 players; got ${players.length}`);
  }
  const seen = new Set<string>();
  for (const id of players) {
    if (id === '') throw new UserError('a schedule got an empty player id');
    if (seen.has(id)) throw new UserError(`player "${id}" is listed twice; each player must appear once`);
    seen.add(id);
  }
}
