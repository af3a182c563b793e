import { describe, expect, it } from 'vitest';

import type { EvaluationSummary } from '../../src/records/evaluation-records.js';
import { formatStudents } from '../../src/records/students-table.js';
import { winAgainstBase } from '../../src/students/students.js';
import { type StudentsRecord } from '../../src/records/students-record.js';

function cell(winRateWithTies: number, pairs: number) {
  return {
    pairs,
    wins: 0,
    losses: 0,
    ties: 0,
    winRate: null,
    winRateInterval: null,
    winRateWithTies,
    winRateWithTiesInterval: { lower: winRateWithTies / 2, upper: 1 },
    meanPreference: null,
    signTestP: null,
    judgments: { count: 0, wins: 0, losses: 0, ties: 0, winRate: null },
    winRateBootstrap: null,
    winRateWithTiesBootstrap: null,
  };
}

const summary = {
  figures: {
    winRates: [
      {
        candidate: 'M2',
        baseline: 'L0',
        condition: 'bare',
        judges: [
          { judge: 'claude', perTask: [], pooled: cell(0.25, 4) },
          { judge: 'qwen', perTask: [], pooled: cell(0.75, 4) },
          { judge: 'all judges', perTask: [], pooled: cell(0.5, 4) },
          { judge: 'oracle', perTask: [], pooled: cell(1, 4) },
        ],
      },
      {
        candidate: 'S2',
        baseline: 'L0',
        condition: 'bare',
        judges: [
          { judge: 'claude', perTask: [], pooled: cell(0.25, 3) },
          { judge: 'oracle', perTask: [], pooled: cell(1, 3) },
        ],
      },
    ],
  },
} as unknown as Pick<EvaluationSummary, 'figures'>;

describe('a student’s win rate against the base', () => {
  it('is the pooled judges’ row when there are several, the one judge’s otherwise, never the oracle’s', () => {
    expect(winAgainstBase(summary, 'M2')).toMatchObject({
      judge: 'all judges',
      winRateWithTies: 0.5,
      pairs: 4,
    });
    expect(winAgainstBase(summary, 'S2')).toMatchObject({ judge: 'claude', winRateWithTies: 0.25, pairs: 3 });
    expect(winAgainstBase(summary, 'X2')).toMatchObject({ judge: null, winRateWithTies: null, pairs: 0 });
  });

  it('is printed with its interval, the tokens and the stand-in’s caveat', () => {
    const record: StudentsRecord = {
      name: 'default',
      generation: 'L0',
      base: 'L0',
      trainer: 'toy',
      standIn: 'toy',
      evaluation: { rollouts: 2, tasks: ['t'], judges: ['toy-judge'], condition: 'bare' },
      teamVersusSingle: null,
      students: [
        {
          name: 'M2',
          kind: 'M',
          teamEpisodes: 2,
          singleEpisodes: 0,
          episodeIds: ['a', 'b'],
          validationEpisodeIds: ['c'],
          tokens: {
            windows: 6,
            steps: 3,
            batchSize: 2,
            storedSupervisedTokens: 19_672,
            expectedProcessedSupervisedTokens: 19_700,
            processedSupervisedTokens: 1_234_567,
          },
          trainer: 'toy',
          metrics: {
            steps: 1,
            supervisedTokensProcessed: 19_672,
            trainLoss: [],
            validationLoss: [],
            checkpoints: [],
            chosenCheckpoint: null,
          },
          ...winAgainstBase(summary, 'M2'),
        },
      ],
    };
    const text = formatStudents(record);
    expect(text).toMatch(/M2\s+multi-agent\s+2 \+ 0\s+1\.23 M\s+4\s+n\/a\s+50\.0 % \[25\.0, 100\.0\]/);
    expect(text).toContain('say nothing about a real model');
    expect(formatStudents({ ...record, standIn: null })).not.toContain('real model');
  });
});
