import { textTable } from '../text-table.js';
import type { Interval } from '../statistics/interval.js';
import { STUDENT_KIND_NAMES } from './student-datasets.js';
import type { StudentsRecord } from './students.js';

/** `62.5 % [24.5, 91.5]`: a rate in percent with its interval; `n/a` when no pair was decided. */
export function percentCell(rate: number | null, interval: Interval | null): string {
  if (rate === null) return 'n/a';
  const shown = (value: number) => (value * 100).toFixed(1);
  return `${shown(rate)} %${interval ? ` [${shown(interval.lower)}, ${shown(interval.upper)}]` : ''}`;
}

/** A token count as printed: `1.23 M` from a million on, else with thousands separators. */
export function tokenCount(count: number): string {
  return count >= 1e6 ? `${(count / 1e6).toFixed(2)} M` : Math.round(count).toLocaleString('en-US');
}

/** The experiment's table: each student's data, processed supervised tokens and win rate against the base. */
export function formatStudents(record: StudentsRecord): string {
  const rows = record.students.map((student) => [
    student.name,
    STUDENT_KIND_NAMES[student.kind],
    `${student.teamEpisodes} + ${student.singleEpisodes}`,
    tokenCount(student.tokens.processedSupervisedTokens),
    String(student.pairs),
    percentCell(student.winRate, student.winRateInterval),
    percentCell(student.winRateWithTies, student.winRateWithTiesInterval),
  ]);
  const lines = [
    `students of ${record.generation}'s collections, each trained from ${record.base} by the ${record.trainer} trainer and judged against it (${record.evaluation.condition} task, ${record.evaluation.rollouts} rollout(s) per task, judges: ${record.evaluation.judges.join(', ')})`,
    ...textTable(
      [
        'student',
        'data',
        'team + single episodes',
        'processed supervised tokens',
        'pairs',
        'W/(W+L) [exact]',
        '(W+T/2)/N [interval]',
      ],
      rows,
    ),
    'intervals over episode pairs; tokens: the training sampler’s exact count for the student’s windows and steps',
  ];
  if (record.standIn !== null) {
    lines.push(
      `the model is the ${record.standIn} stand-in: these numbers test the pipeline and say nothing about a real model`,
    );
  }
  return lines.join('\n');
}
