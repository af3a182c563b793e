// Random numbers a failing test can replay: tests that kill a stage at a random moment draw the moment from here.
// The seed is printed; set MASS_TEST_SEED to it to draw the same delays again.
import { randomInt } from 'node:crypto';

/** The seed of this test process: MASS_TEST_SEED when set, a fresh one otherwise. */
export function testSeed(): number {
  const configured = process.env.MASS_TEST_SEED;
  if (configured === undefined || configured === '') return randomInt(2 ** 31);
  const seed = Number(configured);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new Error(`MASS_TEST_SEED must be a whole number, not ${configured}`);
  return seed;
}

/**
 * A generator of numbers in [0, 1), like Math.random, seeded from the process's seed and `label` (so one test's draws
 * do not depend on which tests ran before it). Prints the seed and how to replay it.
 */
export function seededRandom(label: string, seed = testSeed()): () => number {
  console.log(`${label}: random seed ${seed}; replay with MASS_TEST_SEED=${seed}`);
  let state = (seed ^ hash(label)) >>> 0;
  // mulberry32
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) h = Math.imul(h ^ text.charCodeAt(index), 0x01000193);
  return h >>> 0;
}
