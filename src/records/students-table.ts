import { textTable } from '../text-table.js';
import type { Interval } from '../statistics/interval.js';
import { STUDENT_KIND_NAMES } from './students-record.js';
import type { StudentsRecord } from './students-record.js';
import type { TeamVersusSingle } from './students-record.js';

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

/** The experiment's tables: the team against the single agent, then each student's data, tokens and win rate. */
export function formatStudents(record: StudentsRecord): string {
  const lines: string[] = [];
  if (record.teamVersusSingle) lines.push(...teamVersusSingleLines(record.teamVersusSingle), '');
  if (record.evaluation !== null) {
    const rows = record.students.map((student) => [
      student.name,
      STUDENT_KIND_NAMES[student.kind],
      `${student.teamEpisodes} + ${student.singleEpisodes}`,
      tokenCount(student.tokens.processedSupervisedTokens),
      String(student.pairs),
      percentCell(student.winRate, student.winRateInterval),
      percentCell(student.winRateWithTies, student.winRateWithTiesInterval),
    ]);
    lines.push(
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
    );
  }
  if (record.standIn !== null) {
    lines.push(
      `the model is the ${record.standIn} stand-in: these numbers test the pipeline and say nothing about a real model`,
    );
  }
  return lines.join('\n');
}

/** One row per judge (and the pooled judges), over every pair and over the length-matched ones. */
export function teamVersusSingleRows(figures: TeamVersusSingle): string[][] {
  const matched = figures.pairs.filter((pair) => pair.lengthMatched).length;
  return [
    ...figures.overall.map((row) => ({ pairs: `all (${figures.pairs.length})`, row })),
    ...figures.lengthMatched.map((row) => ({ pairs: `length-matched (${matched})`, row })),
  ].map(({ pairs, row }) => [
    pairs,
    row.judge,
    `${row.pooled.wins}-${row.pooled.losses}-${row.pooled.ties}`,
    percentCell(row.pooled.winRate, row.pooled.winRateInterval),
    percentCell(row.pooled.winRateWithTies, row.pooled.winRateWithTiesInterval),
    `${row.pooled.judgments.wins}-${row.pooled.judgments.losses}-${row.pooled.judgments.ties}`,
    percentCell(row.pooled.judgments.winRate, null),
  ]);
}

export const TEAM_VERSUS_SINGLE_COLUMNS = [
  'pairs',
  'judge',
  'team W-L-T (pairs)',
  'team W/(W+L) [interval]',
  '(W+T/2)/N [interval]',
  'W-L-T (judgments)',
  'W/(W+L) over judgments',
];

function teamVersusSingleLines(figures: TeamVersusSingle): string[] {
  return [
    `the team's outputs against the single agent's, ${figures.generation}'s collection runs of the same task and seed, judged by ${figures.judges.join(', ')} (${figures.judgeSeeds} seed(s), orders ${figures.orders}); length-matched: output tokens within ${figures.lengthRatio}× of each other`,
    ...textTable(TEAM_VERSUS_SINGLE_COLUMNS, teamVersusSingleRows(figures)),
    `intervals over episode pairs (the pair's preference is the mean of its judgments); the judgments' own rate has no interval${
      figures.unpaired.length > 0 ? `; ${figures.unpaired.length} run(s) unpaired` : ''
    }${figures.failedJudgments > 0 ? `; ${figures.failedJudgments} judgment(s) failed` : ''}`,
  ];
}
