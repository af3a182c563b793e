import { describe, expect, it } from 'vitest';

import { actionableSentences } from '../../src/optimizer/actionable-sentences.js';
import { recurringProblems } from '../../src/optimizer/recurring-problems.js';
import { history, V1_RATIONALE, V2_RATIONALE } from './support.js';

describe('actionable sentences', () => {
  it('keeps the sentences that name a shortcoming or a demand, in order', () => {
    expect(actionableSentences(V1_RATIONALE)).toEqual([
      'Workspace A is missing results/ablation.json and its report lacks a Limitations section.',
      'A should have rerun run.py before reporting; its numbers did not match results/metrics.json.',
    ]);
  });

  it('reads bullet lists and drops duplicates', () => {
    expect(
      actionableSentences(`${V2_RATIONALE}\n- A must report uncertainty for every headline number.`),
    ).toEqual([
      'Workspace A still has no results/ablation.json, so the ablation is missing again.',
      'A must report uncertainty for every headline number.',
    ]);
  });

  it('finds nothing in praise, and respects the limit', () => {
    expect(actionableSentences('Both workspaces are excellent. B is slightly clearer.')).toEqual([]);
    expect(actionableSentences('A must do x. A should do y. A lacks z.', { limit: 2 })).toHaveLength(2);
  });
});

describe('recurring problems', () => {
  it('lists deliverables reported missing, repeated failures, idle teams, criticised areas and a losing streak', () => {
    const problems = recurringProblems(history());
    expect(problems.map((problem) => problem.kind)).toEqual([
      'missing-deliverable',
      'execution-failure',
      'no-delegation',
      'rubric-area',
      'losing-streak',
    ]);
    expect(problems[0]).toEqual({
      kind: 'missing-deliverable',
      text: '"results/ablation.json" was reported missing or incomplete in 2 comparisons (1, 2): make producing and checking it part of a contract.',
      comparisons: [1, 2],
    });
    expect(problems[1]!.text).toBe(
      'Runs failed with "timeout" 2 times (comparisons 1, 2); latest: stopped after 3600 s',
    );
    expect(problems.find((problem) => problem.kind === 'rubric-area')!.text).toMatch(
      /^Deliverable coverage was criticised in 2 comparisons/,
    );
  });

  it('needs a problem to repeat before it is listed', () => {
    expect(recurringProblems(history().slice(0, 1))).toEqual([]);
    expect(recurringProblems(history().slice(0, 1), { minimumOccurrences: 1 }).length).toBeGreaterThan(0);
  });
});
