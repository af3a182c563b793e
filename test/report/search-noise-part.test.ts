import { describe, expect, it } from 'vitest';

import { searchNoisePart } from '../../src/report/sections/search-noise-part.js';
import { noiseFigures } from '../../src/records/noise-figures.js';
import type { PromotionRerun, SelfComparison, TaskRepeats } from '../../src/records/repeat-records.js';
import type { TaskSearchResult } from '../../src/records/search-records.js';

const match = (first: string, second: string, result: 'first' | 'second' | 'tie') => ({
  first,
  second,
  purpose: 'candidate-vs-champion' as const,
  result,
  rationale: null,
  judgment: `search/L0/t/repeats/judgments/${first}-vs-${second}.json`,
});

const self = (design: string, candidate: string, incumbent: string, result: 'first' | 'second' | 'tie') =>
  ({
    design,
    candidate: Number(candidate.at(-1)),
    incumbent: incumbent === design ? 0 : Number(incumbent.at(-1)),
    match: match(candidate, incumbent, result),
    promoted: result === 'first',
  }) satisfies SelfComparison;

/** v1 took the reference's place at iteration 1; its replays won once and lost once. */
const promotions: PromotionRerun[] = [
  {
    version: 'v1',
    championBefore: 'reference',
    original: [match('v1', 'reference', 'first')],
    replays: [
      { index: 1, matches: [match('v1-r1', 'reference-r1', 'first')], promoted: true },
      { index: 2, matches: [match('v1-r2', 'reference-r2', 'second')], promoted: false },
    ],
  },
];
const selfComparisons = [
  self('reference', 'reference-r1', 'reference', 'tie'),
  self('reference', 'reference-r2', 'reference', 'first'),
  self('reference', 'reference-r2', 'reference-r1', 'second'),
];
const repeats = {
  generation: 'L0',
  task: 'demo-potency',
  repeats: 2,
  championRule: 'paper',
  judgeMode: 'random',
  seed: 3,
  designs: ['reference', 'v1'],
  runs: [],
  selfComparisons,
  promotions,
  figures: noiseFigures({ selfComparisons, promotions }),
} satisfies TaskRepeats;

/** Only what the part reads of a search: its task and each iteration's proposal and bound. */
const search = {
  task: 'demo-potency',
  iterations: [
    { version: 'v0', proposal: null, maxChangeFraction: null },
    { version: 'v1', proposal: { ok: true, changeFraction: 0.25, basedOn: 'v0' }, maxChangeFraction: 0.6 },
    { version: 'v2', proposal: { ok: true, changeFraction: 0.1, basedOn: 'v1' }, maxChangeFraction: 0.3 },
  ],
} as unknown as TaskSearchResult;

const text = (markup: { markup: string }) =>
  markup.markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('the report’s search noise, per generation', () => {
  it('gives each figure with its count and Wilson interval, per task and for all tasks', () => {
    const shown = text(searchNoisePart('L0', [search], [repeats], undefined));
    expect(shown).toContain('Search noise, L0');
    // Flips: won, won, lost at runs 0, 1, 2: (0,2) and (1,2) differ. Wilson intervals as SciPy's (noise-figures.test.ts).
    expect(shown).toContain('2 of 3 · 66.7 % (20.8–93.9 %)');
    // Spurious promotions: reference-r2 over reference, 1 of 3.
    expect(shown).toContain('1 of 3 · 33.3 % (6.1–79.2 %)');
    expect(shown).toContain('1 of 2 · 50.0 % (9.5–90.5 %)');
    expect(shown.match(/2 of 3 · 66\.7 %/g)).toHaveLength(2);
  });

  it('sets each champion change beside the stabiliser’s bound, or says there was none', () => {
    const bounded = text(searchNoisePart('L0', [search], [repeats], { initialMaxChange: 0.6, decay: 0.5 }));
    expect(bounded).toContain(
      'The stabiliser bounded iteration i to 60.0 % × 0.5 i−1 of the design (1: 60.0 %, 2: 30.0 %)',
    );
    expect(bounded).toContain('demo-potency v1 1 reference → v1 25.0 % 60.0 % 1 of 2 2 of 3');
    expect(bounded).toContain('took its place in 33.3 % of the trials');
    const unbounded = text(searchNoisePart('L0', [search], [repeats], undefined));
    expect(unbounded).toContain('No stabiliser was set (search.stabiliser)');
  });

  it('says when the noise was not measured', () => {
    expect(text(searchNoisePart('L1', [search], [], undefined))).toContain(
      'Not measured: no task of this generation has reruns',
    );
  });
});
