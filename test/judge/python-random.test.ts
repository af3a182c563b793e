import { describe, expect, it } from 'vitest';

import { officialSwap, PythonRandom } from '../../src/judge/python-random.js';

// Expected values printed by CPython 3.11's `random` module (`random.Random(seed)`), the official code's generator.
describe('PythonRandom', () => {
  it("draws CPython's 32-bit outputs for small, negative and multi-word seeds, also past the first twist", () => {
    expect(new PythonRandom(42).getrandbits(32)).toBe(2746317213);
    expect(new PythonRandom(5).getrandbits(32)).toBe(2675342405);
    expect(new PythonRandom(-3).getrandbits(32)).toBe(1022050301);
    const multiWord = new PythonRandom(2 ** 40 + 7);
    expect([0, 1, 2].map(() => multiWord.getrandbits(32))).toEqual([2635837658, 3209733218, 3500038837]);
    const long = new PythonRandom(1);
    let last = 0;
    for (let i = 0; i < 700; i++) last = long.getrandbits(32);
    expect(last).toBe(3348972608);
  });

  it('chooses as random.choice does, rejection sampling included', () => {
    const random = new PythonRandom(12345);
    expect(Array.from({ length: 8 }, () => random.choiceIndex(10))).toEqual([6, 0, 4, 5, 3, 4, 9, 6]);
  });

  it("reproduces the official evaluation's A/B swap per judge seed", () => {
    const seeds = [0, 1, 2, 3, 7, 42, 43, 44, 100, 2 ** 40];
    expect(seeds.map(officialSwap)).toEqual([
      true,
      false,
      false,
      false,
      true,
      false,
      false,
      true,
      false,
      false,
    ]);
  });

  it('refuses a seed it cannot represent exactly', () => {
    expect(() => new PythonRandom(0.5)).toThrow(/safe integer/);
  });
});
