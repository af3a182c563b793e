import { describe, expect, it } from 'vitest';

import {
  computeEvaluationFigures,
  EvaluationFigures,
  noGradedLoopTaskReason,
  noGradedTaskReason,
  noOracleVerdictReason,
  type AgreementSample,
  type GradedRollout,
  type JudgedPair,
  type SelectedRun,
} from '../../../src/records/evaluation-statistics/index.js';
import { UserError } from '../../../src/errors.js';
import { judged, rollout } from './support.js';

/**
 * Two tasks × 4 replicates of L0 and L1: on "graded" the grader gives L0 50 + r and L1 60 + r; "judged-only" has no
 * grader, so its episodes carry no grade. A judge prefers L1 everywhere. The loop selected one run of each task.
 */
function evaluation(gradedTasks: readonly string[]): {
  judgments: JudgedPair[];
  rollouts: GradedRollout[];
  selectedRuns: SelectedRun[];
  agreementSamples: AgreementSample[];
} {
  const judgments: JudgedPair[] = [];
  const rollouts: GradedRollout[] = [];
  for (const task of ['graded', 'judged-only']) {
    const withGrader = gradedTasks.includes(task);
    for (let replicate = 0; replicate < 4; replicate++) {
      rollouts.push(
        rollout({ task, replicate, generation: 'L0', grade: withGrader ? 50 + replicate : null }),
        rollout({ task, replicate, generation: 'L1', grade: withGrader ? 60 + replicate : null }),
      );
      judgments.push(judged({ task, replicate, judge: 'external:fair', outcome: 'win' }));
    }
  }
  const selectedRuns: SelectedRun[] = ['graded', 'judged-only'].map((task) => ({
    generation: 'L1',
    task,
    run: `${task}-run-0`,
    grade: gradedTasks.includes(task) ? 10 : null,
    collectionGrades: gradedTasks.includes(task) ? [10, 50, 90] : [],
    flagged: false,
  }));
  const agreementSamples: AgreementSample[] = [
    {
      name: 'tournament L1',
      verdicts: ['self:L1', 'external:fair'].map((evaluator) => ({
        evaluator,
        task: 'judged-only',
        item: 'L1/judged-only/match/0',
        outcome: 'win' as const,
      })),
    },
  ];
  return { judgments, rollouts, selectedRuns, agreementSamples };
}

const options = { comparisons: [{ candidate: 'L1', baseline: 'L0' }], resamples: 50 };

describe('evaluation figures of tasks without a grader', () => {
  it('leave out every grade figure, with the reason, when no task has a grader', () => {
    const figures = computeEvaluationFigures(
      { ...evaluation([]), tasksWithoutGrader: ['graded', 'judged-only'] },
      options,
    );
    expect(EvaluationFigures.parse(figures)).toEqual(figures);
    expect(figures.grading).toEqual({
      tasksWithGrader: [],
      tasksWithoutGrader: ['graded', 'judged-only'],
      loopTasksWithoutGrader: ['graded', 'judged-only'],
      rolloutsWithoutGrader: 16,
      note: expect.stringMatching(
        /^No task in this evaluation has an objective grader: the evaluation rests on the external judges; the loop's runs of graded, judged-only were not graded/,
      ),
      omitted: [
        { figure: 'oracle-win-rates', reason: noGradedTaskReason },
        { figure: 'grades', reason: noGradedTaskReason },
        { figure: 'grade-differences', reason: noGradedTaskReason },
        { figure: 'grade-per-token', reason: noGradedTaskReason },
        { figure: 'oracle-agreement', reason: noOracleVerdictReason },
        { figure: 'reward-hacking', reason: noGradedLoopTaskReason },
      ],
    });
    // The judges' figures stand; nothing that needs a grade is there, not even as an empty or zero row.
    expect(figures.winRates[0]!.judges.map((judge) => judge.judge)).toEqual(['external:fair']);
    expect(figures.winRates[0]!.judges[0]!.pooled).toMatchObject({ wins: 8, losses: 0 });
    expect(figures.grades).toEqual([]);
    expect(figures.gradeDifferences).toEqual([]);
    expect(figures.rewardHacking).toEqual([]);
    expect(figures.tokens.map((entry) => entry.gradePerThousandTokens)).toEqual([null, null]);
    expect(figures.agreement.flatMap((entry) => entry.evaluators)).not.toContain('oracle');
    // An episode no grader could grade is not a failed grade.
    expect(figures.counts.ungradedRollouts).toBe(0);
  });

  it('with a mix, cover the graded tasks alone and name them', () => {
    const figures = computeEvaluationFigures(
      { ...evaluation(['graded']), tasksWithoutGrader: ['judged-only'] },
      options,
    );
    expect(figures.grading).toMatchObject({
      tasksWithGrader: ['graded'],
      tasksWithoutGrader: ['judged-only'],
      loopTasksWithoutGrader: ['judged-only'],
      rolloutsWithoutGrader: 8,
      omitted: [],
    });
    expect(figures.grading.note).toContain(
      'The grade figures cover only the tasks with an objective grader (graded); judged-only has none and rests on the external judges',
    );
    const oracle = figures.winRates[0]!.judges.find((judge) => judge.judge === 'oracle')!;
    expect(oracle.perTask.map((cell) => cell.task)).toEqual(['graded']);
    expect(oracle.pooled).toMatchObject({ wins: 4, losses: 0, pairs: 4 });
    // Means over the graded task's 4 episodes alone: (50+51+52+53)/4 and (60+...+63)/4.
    expect(
      figures.grades.map((grade) => [grade.generation, grade.episodes, grade.graded, grade.mean]),
    ).toEqual([
      ['L0', 4, 4, 51.5],
      ['L1', 4, 4, 61.5],
    ]);
    expect(figures.gradeDifferences).toEqual([expect.objectContaining({ pairs: 4, meanDifference: 10 })]);
    // Only the graded task's selected run is placed (10 is in the bottom half of 10, 50, 90).
    expect(figures.rewardHacking).toEqual([
      expect.objectContaining({ generation: 'L1', selected: 1, graded: 1, bottomHalf: 1 }),
    ]);
    const withOracle = figures.agreement.find((entry) => entry.evaluators.includes('oracle'))!;
    expect(withOracle.items).toBe(4);
    expect(figures.counts.ungradedRollouts).toBe(0);
  });

  it('say nothing when every task has a grader, and count a missing grade as a failed one', () => {
    const figures = computeEvaluationFigures(evaluation(['graded']), options);
    expect(figures.grading).toMatchObject({ tasksWithoutGrader: [], note: null, omitted: [] });
    expect(figures.counts.ungradedRollouts).toBe(8);
    expect(figures.grades.find((grade) => grade.generation === 'L0')).toMatchObject({
      episodes: 8,
      graded: 4,
    });
  });

  it('refuse a grade or an oracle verdict on a task listed without a grader', () => {
    expect(() =>
      computeEvaluationFigures({ ...evaluation(['graded']), tasksWithoutGrader: ['graded'] }, options),
    ).toThrow(UserError);
    const oracleVerdict = { evaluator: 'oracle', task: 'judged-only', item: 'm', outcome: 'win' as const };
    const inputs = evaluation(['graded']);
    inputs.agreementSamples[0]!.verdicts.push(oracleVerdict);
    expect(() =>
      computeEvaluationFigures({ ...inputs, tasksWithoutGrader: ['judged-only'] }, options),
    ).toThrow(/task "judged-only" has no grader, yet it has an oracle verdict/);
  });
});
