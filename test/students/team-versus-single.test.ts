import { describe, expect, it } from 'vitest';

import type { JudgmentRow } from '../../src/records/evaluation-records.js';
import { formatStudents } from '../../src/records/students-table.js';
import { lengthMatched, teamVersusSingleFigures } from '../../src/students/team-versus-single.js';

function row(task: string, replicate: number, judge: string, outcome: JudgmentRow['outcome']): JudgmentRow {
  return {
    task,
    replicate,
    judge,
    outcome,
    status: outcome === null ? 'failed' : 'ok',
    candidate: 'team',
    baseline: 'single-agent',
  } as JudgmentRow;
}

const pairs = [
  {
    task: 't1',
    seed: 0,
    team: 'L0-distill-t1-0',
    single: 'L0-single-agent-distill-t1-0',
    teamOutputTokens: 100,
    singleOutputTokens: 110,
  },
  {
    task: 't1',
    seed: 1,
    team: 'L0-distill-t1-1',
    single: 'L0-single-agent-distill-t1-1',
    teamOutputTokens: 100,
    singleOutputTokens: 200,
  },
  {
    task: 't2',
    seed: 0,
    team: 'L0-distill-t2-0',
    single: 'L0-single-agent-distill-t2-0',
    teamOutputTokens: 50,
    singleOutputTokens: 40,
  },
];

const rows = [
  // t1/0: the team wins 3 of 4 judgments, one tie: a win.
  row('t1', 0, 'j1', 'win'),
  row('t1', 0, 'j1', 'win'),
  row('t1', 0, 'j2', 'win'),
  row('t1', 0, 'j2', 'tie'),
  // t1/1: a loss.
  row('t1', 1, 'j1', 'loss'),
  row('t1', 1, 'j1', 'loss'),
  row('t1', 1, 'j2', 'loss'),
  row('t1', 1, 'j2', 'win'),
  // t2/0: a tie, and a judgment that failed.
  row('t2', 0, 'j1', 'tie'),
  row('t2', 0, 'j1', 'tie'),
  row('t2', 0, 'j2', 'win'),
  row('t2', 0, 'j2', 'loss'),
  row('t2', 0, 'j2', null),
];

const figures = teamVersusSingleFigures({
  generation: 'L0',
  judges: ['j1', 'j2'],
  judgeSeeds: 1,
  orders: 'both',
  lengthRatio: 1.25,
  pairs,
  unpaired: [{ task: 't2', episodeId: 'L0-distill-t2-1', reason: 'L0-distill-t2-1 ended in failure' }],
  rows,
  bootstrapSeed: 0,
});

describe('the team against the single agent', () => {
  it('matches lengths by the ratio of output tokens, both ways', () => {
    expect(lengthMatched(100, 125, 1.25)).toBe(true);
    expect(lengthMatched(125, 100, 1.25)).toBe(true);
    expect(lengthMatched(100, 126, 1.25)).toBe(false);
    expect(lengthMatched(0, 0, 1.25)).toBe(true);
    expect(lengthMatched(0, 3, 1.25)).toBe(false);
    expect(figures.pairs.map((pair) => pair.lengthMatched)).toEqual([true, false, true]);
  });

  it('takes the episode pair as the unit: its preference is the mean of its decided judgments', () => {
    expect(figures.pairs.map((pair) => [pair.judgments, pair.preference])).toEqual([
      [4, 0.875],
      [4, 0.25],
      [4, 0.5],
    ]);
    expect(figures.failedJudgments).toBe(1);
    const byJudge = Object.fromEntries(figures.overall.map((entry) => [entry.judge, entry.pooled]));
    expect(Object.keys(byJudge)).toEqual(['j1', 'j2', 'all judges']);
    expect(byJudge.j1).toMatchObject({ pairs: 3, wins: 1, losses: 1, ties: 1, winRate: 0.5 });
    expect(byJudge.j2).toMatchObject({ pairs: 3, wins: 1, losses: 0, ties: 2, winRate: 1 });
    expect(byJudge['all judges']).toMatchObject({ pairs: 3, wins: 1, losses: 1, ties: 1, winRate: 0.5 });
    // The paper's rate over judgments, kept beside it without an interval.
    expect(byJudge['all judges']!.judgments).toMatchObject({ count: 12, wins: 5, losses: 4, ties: 3 });
    expect(byJudge['all judges']!.judgments.winRate).toBeCloseTo(5 / 9, 12);
  });

  it('gives the same figures over the length-matched pairs alone', () => {
    const pooled = figures.lengthMatched.find((entry) => entry.judge === 'all judges')!.pooled;
    expect(pooled).toMatchObject({ pairs: 2, wins: 1, losses: 0, ties: 1, winRate: 1 });
    // One decided pair: the exact interval over pairs is wide, whatever the judgments say.
    expect(pooled.winRateInterval!.lower).toBeCloseTo(0.025, 3);
    expect(pooled.winRateInterval!.upper).toBe(1);
    expect(pooled.signTestP).toBe(1);
  });

  it('is printed before the students, with its pairs and judgments apart', () => {
    const text = formatStudents({
      name: 'default',
      generation: 'L0',
      base: 'L0',
      trainer: 'toy',
      standIn: null,
      evaluation: null,
      students: [],
      teamVersusSingle: figures,
    });
    expect(text).toMatch(/all \(3\)\s+all judges\s+1-1-1\s+50\.0 % \[[\d.]+, [\d.]+\]/);
    expect(text).toMatch(/length-matched \(2\)\s+all judges\s+1-0-1\s+100\.0 % \[2\.5, 100\.0\]/);
    expect(text).toContain('5-4-3');
    expect(text).toContain('1 run(s) unpaired; 1 judgment(s) failed');
    expect(text).not.toContain('students of');
  });
});
