import type { EvaluationSummary } from '../records/evaluation-records.js';
import type { GradeFigure, Interval } from '../records/evaluation-statistics/index.js';

/** How the terminal summary of an evaluation names what it shows: models and judges, the level, the left-out. */
export interface SummaryWording {
  judgeName: (name: string) => string;
  modelName: (name: string) => string;
  /** The confidence level of the intervals, e.g. `95 %`. */
  level: string;
  /** Why a figure was left out, or undefined when it is shown. */
  omitted: (figure: GradeFigure) => string | undefined;
  /** ` (tasks with a grader only: …)` when only some tasks have a grader, else empty. */
  covered: string;
}

export function summaryWording(summary: EvaluationSummary): SummaryWording {
  const { grading, settings } = summary.figures;
  return {
    judgeName: labelled(summary.judges),
    modelName: labelled(summary.models),
    level: `${Math.round(settings.confidence * 100)} %`,
    omitted: (figure) => grading.omitted.find((entry) => entry.figure === figure)?.reason,
    covered:
      grading.tasksWithoutGrader.length > 0 && grading.tasksWithGrader.length > 0
        ? ` (tasks with a grader only: ${grading.tasksWithGrader.join(', ')})`
        : '',
  };
}

/** A name with its stand-in label, e.g. `L1 (toy)`, for the models or judges of a summary. */
function labelled(
  entries: ReadonlyArray<{ name: string; standIn: string | null }>,
): (name: string) => string {
  const labels = new Map(entries.map((entry) => [entry.name, entry.standIn]));
  return (name) => {
    const label = labels.get(name);
    return label ? `${name} (${label})` : name;
  };
}

/** `wins-losses-ties`. */
export function record(cell: { wins: number; losses: number; ties: number }): string {
  return `${cell.wins}-${cell.losses}-${cell.ties}`;
}

export function rate(value: number | null): string {
  return value === null ? '–' : `${(value * 100).toFixed(0)} %`;
}

export function number(value: number | null, digits = 1): string {
  return value === null ? '–' : value.toFixed(digits);
}

export function signed(value: number | null): string {
  return value === null ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
}

/** `[low, high]` as percentages by default, else with the given decimals; `[–]` without one. */
export function interval(value: Interval | null, digits?: number): string {
  if (value === null) return '[–]';
  if (digits === undefined) return `[${(value.lower * 100).toFixed(0)}, ${(value.upper * 100).toFixed(0)}]`;
  return `[${value.lower.toFixed(digits)}, ${value.upper.toFixed(digits)}]`;
}
