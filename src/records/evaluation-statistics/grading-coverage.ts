import type { GradeFigure, GradingCoverage } from '../evaluation-figures.js';
import { distinctSorted } from './grouping.js';

/** Why the evaluation's grade figures are left out when none of its tasks has a grader. */
export const noGradedTaskReason =
  'no task in this evaluation has an objective grader: the evaluation rests on the external judges';

/** Why reward hacking is left out when none of the loop's selected runs belongs to a task with a grader. */
export const noGradedLoopTaskReason =
  "no task of the loop's collections has an objective grader: the runs it selected cannot be placed by grade";

/** Why evaluator agreement has no oracle when no judged pair belongs to a task with a grader. */
export const noOracleVerdictReason =
  'no judged pair belongs to a task with an objective grader: there is no oracle verdict to agree with';

export interface GradingCoverageInputs {
  /** The tasks of the evaluation's own episodes and judgments. */
  evaluationTasks: Iterable<string>;
  /** The tasks of the loop's selected runs. */
  selectedRunTasks: Iterable<string>;
  /** The tasks of the further agreement samples (the loop's tournament matches). */
  sampleTasks: Iterable<string>;
  /** Every task named in the inputs whose task.yaml names no grader. */
  tasksWithoutGrader: ReadonlySet<string>;
  /** The evaluation's episodes of those tasks. */
  rolloutsWithoutGrader: number;
}

/**
 * What the grade figures cover: with every task graded, everything as before and nothing to say; with a mix, the
 * graded tasks alone, named; with none, the figures that need a grade are left out with the reason.
 */
export function gradingCoverage(inputs: GradingCoverageInputs): GradingCoverage {
  const without = inputs.tasksWithoutGrader;
  const evaluationTasks = distinctSorted(inputs.evaluationTasks);
  const tasksWithGrader = evaluationTasks.filter((task) => !without.has(task));
  const tasksWithoutGrader = evaluationTasks.filter((task) => without.has(task));
  const selectedRunTasks = distinctSorted(inputs.selectedRunTasks);
  const loopTasks = distinctSorted([...selectedRunTasks, ...inputs.sampleTasks]);
  const loopTasksWithoutGrader = loopTasks.filter((task) => without.has(task));

  const omitted: GradingCoverage['omitted'] = [];
  const omit = (figures: readonly GradeFigure[], reason: string) =>
    omitted.push(...figures.map((figure) => ({ figure, reason })));
  if (evaluationTasks.length > 0 && tasksWithGrader.length === 0) {
    omit(['oracle-win-rates', 'grades', 'grade-differences', 'grade-per-token'], noGradedTaskReason);
  }
  const judgedTasks = distinctSorted([...evaluationTasks, ...inputs.sampleTasks]);
  if (judgedTasks.length > 0 && judgedTasks.every((task) => without.has(task))) {
    omit(['oracle-agreement'], noOracleVerdictReason);
  }
  if (selectedRunTasks.length > 0 && selectedRunTasks.every((task) => without.has(task))) {
    omit(['reward-hacking'], noGradedLoopTaskReason);
  }

  const sentences: string[] = [];
  if (tasksWithoutGrader.length > 0) {
    sentences.push(
      tasksWithGrader.length === 0
        ? noGradedTaskReason
        : `the grade figures cover only the tasks with an objective grader (${tasksWithGrader.join(', ')}); ` +
            `${tasksWithoutGrader.join(', ')} ${tasksWithoutGrader.length === 1 ? 'has none and rests' : 'have none and rest'} on the external judges`,
    );
  }
  if (loopTasksWithoutGrader.length > 0) {
    sentences.push(
      `the loop's runs of ${loopTasksWithoutGrader.join(', ')} were not graded (no objective grader), ` +
        "so reward hacking and the oracle's agreement leave them out",
    );
  }
  return {
    tasksWithGrader,
    tasksWithoutGrader,
    loopTasksWithoutGrader,
    rolloutsWithoutGrader: inputs.rolloutsWithoutGrader,
    note: sentences.length === 0 ? null : sentence(sentences.join('; ')),
    omitted,
  };
}

function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
