import { describe, expect, it } from 'vitest';

import { maxChangeFraction } from '../../src/search/stabiliser.js';

describe('the search stabiliser', () => {
  it('bounds iteration i by initial · decay^(i-1), and nothing when off', () => {
    const stabiliser = { initialMaxChange: 0.6, decay: 0.5 };
    expect([1, 2, 3].map((iteration) => maxChangeFraction(stabiliser, iteration))).toEqual([0.6, 0.3, 0.15]);
    expect(maxChangeFraction(undefined, 4)).toBeUndefined();
    expect(() => maxChangeFraction(stabiliser, 0)).toThrow(/counted from 1/);
  });
});
