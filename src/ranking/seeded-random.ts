/**
 * A small seeded generator (mulberry32) so schedules and simulations are reproducible from a seed.
 * Not for anything secret.
 */
export type Random = () => number;

/** Uniform in [0, 1) from a non-negative integer seed; the same seed gives the same sequence. */
export function seededRandom(seed: number): Random {
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new RangeError(`seed ${seed}: use a non-negative integer`);
  }
  // Fold the high bits in so seeds that differ only above 2^32 still give different sequences.
  let state = (seed ^ Math.imul(Math.floor(seed / 2 ** 32), 0x9e3779b9)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Fisher–Yates shuffle of a copy. */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}
