import { describe, expect, it } from 'vitest';

import { noiseFigures } from '../../src/records/noise-figures.js';
import type { TaskRepeats } from '../../src/records/repeat-records.js';
import { searchNoiseSection } from '../../src/view/pages/search-noise.js';

const episode = (id: string) => ({
  episodeId: id,
  dir: `episodes/${id}`,
  status: 'success' as const,
  reason: null,
  execution: {
    status: 'success' as const,
    failure: null,
    delegations: 0,
    subagentThreads: 0,
    modelCalls: 1,
    failedModelCalls: 0,
    tokens: { prompt: 1, completion: 1, reasoning: 0, orchestratorCompletion: 1, subagentCompletion: 0 },
    durationMs: 1,
    limitExceeded: null,
    tamperedPaths: [],
  },
});

const match = (first: string, second: string, result: 'first' | 'second' | 'walkover') => ({
  first,
  second,
  purpose: 'candidate-vs-champion' as const,
  result,
  rationale: null,
  judgment: result === 'walkover' ? null : `search/L0/t/repeats/judgments/${first}-vs-${second}.json`,
});

const selfComparisons = [
  {
    design: 'reference',
    candidate: 1,
    incumbent: 0,
    match: match('reference-r1', 'reference', 'first'),
    promoted: true,
  },
];
const promotions = [
  {
    version: 'v0',
    championBefore: 'reference',
    original: [match('v0', 'reference', 'first')],
    replays: [{ index: 1, matches: [match('v0-r1', 'reference-r1', 'walkover')], promoted: false }],
  },
];
const repeats: TaskRepeats = {
  generation: 'L0',
  task: 't',
  repeats: 1,
  championRule: 'paper',
  judgeMode: 'random',
  seed: 4,
  designs: ['reference', 'v0'],
  runs: [
    { design: 'reference', index: 1, label: 'reference-r1', seed: 5, episode: episode('L0-t-reference-r1') },
    {
      design: 'v0',
      index: 1,
      label: 'v0-r1',
      seed: 5,
      episode: { ...episode('L0-t-v0-r1'), status: 'failure' },
    },
  ],
  selfComparisons,
  promotions,
  figures: noiseFigures({ selfComparisons, promotions }),
};

describe('the viewer’s search noise of a task', () => {
  it('links every rerun to its episode and every judged match to a comparison of its two workspaces', () => {
    const page = searchNoiseSection(repeats, undefined, 'L0', 't').markup;
    expect(page).toContain('<a href="/episodes/L0-t-reference-r1/">reference-r1</a>');
    expect(page).toContain('<a href="/episodes/L0-t-v0-r1/">v0-r1</a>');
    // A rerun's episode folder comes from the record; the search's own (run 0) from the search's naming.
    expect(page).toContain(
      `href="/compare?x=${encodeURIComponent('episodes/L0-t-reference-r1')}&amp;y=${encodeURIComponent('episodes/L0-t-reference')}"`,
    );
    // A walkover was not judged: no comparison to open.
    expect(page).toMatch(/v0-r1 vs reference-r1: walkover\s*<\/div>/);
    expect(page).toContain('1 of 1');
    expect(page.replace(/\s+/g, ' ')).toContain('run once more unchanged (rerun i with seed 4 + i)');
  });
});
