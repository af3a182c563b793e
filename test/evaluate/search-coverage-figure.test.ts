import { describe, expect, it } from 'vitest';

import {
  outsideGenerationCoverage,
  SearchCoverageFigure,
  type VersionVerdicts,
} from '../../src/records/search-coverage-figure.js';

const version = (
  iteration: number,
  outcomes: VersionVerdicts['outcomes'],
  episodeFailed = false,
): VersionVerdicts => ({ iteration, version: `v${iteration}`, episodeFailed, outcomes });

describe('the outside search coverage: a version wins when every non-failed judgment prefers it', () => {
  const coverage = outsideGenerationCoverage({
    generation: 'L0',
    confidence: 0.95,
    unfinished: ['half-done'],
    tasks: [
      {
        task: 'split-then-won',
        iterationsRun: 4,
        loopFirstWin: 1,
        versions: [
          // A tie breaks unanimity; a loss too; a failed judgment is left out of the vote.
          version(0, ['win', 'tie', 'win', 'win']),
          version(1, ['win', 'loss']),
          version(2, ['win', null, 'win', 'win']),
          version(3, ['win', 'win']),
        ],
      },
      {
        task: 'never',
        iterationsRun: 3,
        loopFirstWin: 0,
        // Every judgment failed: no vote, no win. A failed episode is never a win.
        versions: [version(0, [null, null]), version(1, [], true), version(2, ['loss', 'loss'])],
      },
      { task: 'at-once', iterationsRun: 2, loopFirstWin: null, versions: [version(0, ['win', 'win'])] },
    ],
  });

  it('finds each task’s first unanimous version', () => {
    expect(coverage.tasks.map((task) => [task.task, task.firstWin, task.loopFirstWin])).toEqual([
      ['split-then-won', 2, 1],
      ['never', null, 0],
      ['at-once', 0, null],
    ]);
    const tallies = coverage.tasks[0]!.versions.map((entry) => [
      entry.wins,
      entry.ties,
      entry.losses,
      entry.failed,
      entry.unanimous,
    ]);
    expect(tallies).toEqual([
      [3, 1, 0, 0, false],
      [1, 0, 1, 0, false],
      [3, 0, 0, 1, true],
      [2, 0, 0, 0, true],
    ]);
    expect(coverage.tasks[1]!.versions.map((entry) => [entry.episode, entry.unanimous])).toEqual([
      ['judged', false],
      ['failed', false],
      ['judged', false],
    ]);
  });

  it('draws the cumulative curve over every task, the censored one included, and names the unfinished', () => {
    expect(coverage.curve.map((point) => `${point.iteration}:${point.won}/${point.tasks}`)).toEqual([
      '0:1/3',
      '1:1/3',
      '2:2/3',
      '3:2/3',
    ]);
    // scipy.stats.beta.ppf(0.025, 2, 2), beta.ppf(0.975, 3, 1): 2 of 3.
    expect(coverage.curve[2]!.interval.lower).toBeCloseTo(0.09429932405024609, 12);
    expect(coverage.curve[2]!.interval.upper).toBeCloseTo(0.9915962413403874, 12);
    expect([coverage.summary.won, coverage.summary.censored, coverage.summary.median?.median]).toEqual([
      2, 1, 2,
    ]);
    expect(coverage.unfinished).toEqual(['half-done']);
  });

  it('fits the summary.json schema', () => {
    const figure = {
      confidence: 0.95,
      judges: ['claude'],
      judgeSeeds: 1,
      generations: [coverage],
      counts: { judgments: 16, failedJudgments: 3, failedEpisodes: 1 },
    };
    expect(SearchCoverageFigure.parse(JSON.parse(JSON.stringify(figure)))).toEqual(figure);
  });
});
