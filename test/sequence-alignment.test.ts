import { describe, expect, it } from 'vitest';

import { alignSequences, commonEnds, type AlignmentStep } from '../src/sequence-alignment.js';

function render<T>(steps: Array<AlignmentStep<T>>): string {
  return steps
    .map((step) => ({ same: ' ', removed: '-', added: '+' })[step.op] + String(step.item))
    .join(' ');
}

/** Applying the steps to `before` must give `after`: kept and added items, in order. */
function replay<T>(steps: Array<AlignmentStep<T>>, side: 'before' | 'after'): T[] {
  return steps
    .filter((step) => step.op === 'same' || step.op === (side === 'before' ? 'removed' : 'added'))
    .map((step) => step.item);
}

describe('alignSequences', () => {
  it('keeps the longest common subsequence and lists removals before additions at each change', () => {
    const steps = alignSequences([...'abcxdef'], [...'abydeQf']);
    expect(render(steps)).toBe(' a  b -c -x +y  d  e +Q  f');
    expect(steps.filter((step) => step.op === 'same')).toHaveLength(5);
  });

  it('gives back both sequences whatever they are', () => {
    let seed = 11;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 200; round++) {
      const before = Array.from(
        { length: Math.floor(random() * 12) },
        () => 'abc'[Math.floor(random() * 3)]!,
      );
      const after = Array.from({ length: Math.floor(random() * 12) }, () => 'abc'[Math.floor(random() * 3)]!);
      const steps = alignSequences(before, after);
      expect(replay(steps, 'before')).toEqual(before);
      expect(replay(steps, 'after')).toEqual(after);
    }
  });

  it('compares items with the given equality and reports the item of `before` as kept', () => {
    const before = [
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ];
    const after = [
      { id: 2, name: 'TWO' },
      { id: 3, name: 'three' },
    ];
    const steps = alignSequences(before, after, { equals: (x, y) => x.id === y.id });
    expect(steps.map((step) => [step.op, step.item.name])).toEqual([
      ['removed', 'one'],
      ['same', 'two'],
      ['added', 'three'],
    ]);
  });

  it('replaces the middle outright beyond the cell bound, keeping the common head and tail', () => {
    const before = ['head', 'x', 'y', 'z', 'tail'];
    const after = ['head', 'y', 'x', 'tail'];
    expect(render(alignSequences(before, after))).toBe(' head -x  y -z +x  tail');
    expect(render(alignSequences(before, after, { maxCells: 5 }))).toBe(' head -x -y -z +y +x  tail');
  });

  it('aligns long inputs within the default bound and falls back beyond it without building the table', () => {
    const many = Array.from({ length: 2500 }, (_, index) => `line ${index}`);
    const shifted = ['inserted', ...many.slice(1)];
    expect(alignSequences(many, shifted).filter((step) => step.op !== 'same')).toHaveLength(2);
    const before = Array.from({ length: 5000 }, (_, index) => `a${index}`);
    const after = Array.from({ length: 5000 }, (_, index) => `b${index}`);
    const started = Date.now();
    const steps = alignSequences(before, after);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(steps.map((step) => step.op)).toEqual([
      ...before.map(() => 'removed'),
      ...after.map(() => 'added'),
    ]);
  });
});

describe('commonEnds', () => {
  it('counts the kept steps at each end, and all of them when nothing changed', () => {
    expect(commonEnds(alignSequences([...'abXcd'], [...'abYcd']))).toEqual({ head: 2, tail: 2 });
    expect(commonEnds(alignSequences([...'abc'], [...'abc']))).toEqual({ head: 3, tail: 0 });
    expect(commonEnds(alignSequences([], ['x']))).toEqual({ head: 0, tail: 0 });
  });
});
