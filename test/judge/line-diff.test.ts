import { describe, expect, it } from 'vitest';

import { unifiedDiff } from '../../src/line-diff.js';

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n')).toBe('');
  });

  it('shows a changed line with its context and a header counting both sides', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7'].join('\n');
    const after = ['1', '2', '3', 'four', '5', '6', '7'].join('\n');
    expect(unifiedDiff(before, after)).toBe(
      ['@@ -2,5 +2,5 @@', ' 2', ' 3', '-4', '+four', ' 5', ' 6'].join('\n'),
    );
  });

  it('shrinks a long unchanged run between two changes', () => {
    const before = ['a', ...Array.from({ length: 10 }, (_, index) => `k${index}`), 'b'].join('\n');
    const after = ['A', ...Array.from({ length: 10 }, (_, index) => `k${index}`), 'B'].join('\n');
    expect(unifiedDiff(before, after, 1).split('\n')).toEqual([
      '@@ -1,12 +1,12 @@',
      '-a',
      '+A',
      ' k0',
      '… 8 unchanged lines …',
      ' k9',
      '-b',
      '+B',
    ]);
  });

  it('shows a large rewrite as one replaced block', () => {
    const before = Array.from({ length: 3000 }, (_, index) => `old ${index}`).join('\n');
    const after = Array.from({ length: 3000 }, (_, index) => `new ${index}`).join('\n');
    const lines = unifiedDiff(before, after).split('\n');
    expect(lines[0]).toBe('@@ -1,3000 +1,3000 @@');
    expect(lines.slice(1, 3001).every((line) => line.startsWith('-old '))).toBe(true);
    expect(lines.slice(3001).every((line) => line.startsWith('+new '))).toBe(true);
  });
});
