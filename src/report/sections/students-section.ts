import { html, type SafeHtml } from '../../html/html.js';
import { STUDENT_KIND_NAMES } from '../../records/students-record.js';
import {
  percentCell,
  TEAM_VERSUS_SINGLE_COLUMNS,
  teamVersusSingleRows,
  tokenCount,
} from '../../records/students-table.js';
import type { StudentsRecord } from '../../records/students-record.js';
import type { TeamVersusSingle } from '../../records/students-record.js';
import { chart } from '../chart.js';
import { formatCount } from '../format.js';
import type { RunReportData } from '../read-run.js';

interface ChartRow {
  student: string;
  data: string;
  tokens: number;
  winRate: number;
  lower: number | null;
  upper: number | null;
}

/**
 * The paper's Figure 6 on this run (`mass students`): each student's win rate against the base over the supervised
 * tokens its training processed, single-agent, multi-agent and mixed data apart, with intervals over episode pairs.
 */
export async function studentsSection(data: RunReportData): Promise<SafeHtml> {
  const experiments = data.students;
  return html`<section id="students">
    <h2>Students: team against single-agent data</h2>
    ${
      experiments.length === 0
        ? html`<p class="empty">
            No students experiment yet: <code>mass students &lt;run-dir&gt; --students S2,M2,X2</code> trains
            them on a round’s selected episodes (single-agent ones need
            <code>distill.singleAgentCollection: true</code>) and writes students/&lt;name&gt;/students.json.
          </p>`
        : html`<p>
              Students trained from the same base on single-agent (S), multi-agent (M) and mixed (X) selected
              episodes of one round, each judged against the base by the external judges. The paper finds the
              multi-agent students ahead of the single-agent ones for the same supervised tokens.
            </p>
            ${await Promise.all(experiments.map(experimentPart))}`
    }
  </section>`;
}

async function experimentPart(record: StudentsRecord): Promise<SafeHtml> {
  return html`<h3>Experiment ${record.name}: ${record.generation}’s collections, base ${record.base}</h3>
    ${record.standIn === null ? '' : html`<p><strong>${standInNote(record.standIn)}</strong></p>`}
    ${record.teamVersusSingle ? await teamVersusSinglePart(record.teamVersusSingle) : ''}
    ${record.evaluation === null ? '' : await studentsPart(record, record.evaluation)}`;
}

async function studentsPart(
  record: StudentsRecord,
  evaluation: NonNullable<StudentsRecord['evaluation']>,
): Promise<SafeHtml> {
  const values: ChartRow[] = record.students.flatMap((student) =>
    student.winRateWithTies === null
      ? []
      : [
          {
            student: student.name,
            data: STUDENT_KIND_NAMES[student.kind],
            tokens: student.tokens.processedSupervisedTokens,
            winRate: student.winRateWithTies,
            lower: student.winRateWithTiesInterval?.lower ?? null,
            upper: student.winRateWithTiesInterval?.upper ?? null,
          },
        ],
  );
  return html`<p class="muted">
      Trainer: ${record.trainer}; evaluation: the ${evaluation.condition} task,
      ${formatCount(evaluation.rollouts)} rollout(s) on each of ${formatCount(evaluation.tasks.length)}
      task(s), judges: ${evaluation.judges.join(', ')}.
    </p>
    ${await chart({
      title: 'Win rate against the base over processed supervised tokens',
      caption:
        '(W + T/2)/N over episode pairs against the base, with its interval over pairs; x: the supervised tokens the student’s training processed, the sampler’s exact count',
      values,
      spec: spec(),
      table: {
        columns: [
          'student',
          'data',
          'team + single episodes',
          'windows',
          'steps × batch',
          'processed supervised tokens',
          'stored supervised tokens',
          'pairs',
          'W/(W+L) [exact]',
          '(W+T/2)/N [interval]',
        ],
        rows: record.students.map((student) => [
          student.name,
          STUDENT_KIND_NAMES[student.kind],
          `${student.teamEpisodes} + ${student.singleEpisodes}`,
          formatCount(student.tokens.windows),
          `${student.tokens.steps} × ${student.tokens.batchSize}`,
          tokenCount(student.tokens.processedSupervisedTokens),
          tokenCount(student.tokens.storedSupervisedTokens),
          formatCount(student.pairs),
          percentCell(student.winRate, student.winRateInterval),
          percentCell(student.winRateWithTies, student.winRateWithTiesInterval),
        ]),
      },
    })}`;
}

/** The external judges' preference for the team's outputs over the single agent's, all pairs and length-matched. */
async function teamVersusSinglePart(figures: TeamVersusSingle): Promise<SafeHtml> {
  const matched = figures.pairs.filter((pair) => pair.lengthMatched).length;
  const values = [
    ...figures.overall.map((row) => ({ row, pairs: 'all pairs' })),
    ...figures.lengthMatched.map((row) => ({ row, pairs: 'length-matched' })),
  ].flatMap(({ row, pairs }) =>
    row.pooled.winRate === null
      ? []
      : [
          {
            label: `${pairs} · ${row.judge}`,
            pairs,
            winRate: row.pooled.winRate,
            lower: row.pooled.winRateInterval?.lower ?? null,
            upper: row.pooled.winRateInterval?.upper ?? null,
          },
        ],
  );
  return html`<h4>The team’s outputs against the single agent’s</h4>
    <p>
      ${formatCount(figures.pairs.length)} pair(s) of ${figures.generation}’s collection runs, a team run and
      the single-agent run of the same task and seed, judged by ${figures.judges.join(', ')}
      (${formatCount(figures.judgeSeeds)} seed(s), orders ${figures.orders}); ${formatCount(matched)} of them
      length-matched (output tokens within ${figures.lengthRatio}× of each other). The paper reports that
      external judges prefer the team’s outputs in 85.1 % of comparisons, 80 % on length-matched pairs.
      ${figures.unpaired.length > 0 ? `${formatCount(figures.unpaired.length)} run(s) had no partner.` : ''}
      ${figures.failedJudgments > 0 ? `${formatCount(figures.failedJudgments)} judgment(s) failed.` : ''}
    </p>
    ${await chart({
      title: 'How often the judges prefer the team',
      caption:
        'W/(W+L) over the decided episode pairs, the team as the candidate, with its interval over pairs; the dashed line is no preference',
      values,
      spec: preferenceSpec(),
      table: { columns: TEAM_VERSUS_SINGLE_COLUMNS, rows: teamVersusSingleRows(figures) },
    })}`;
}

function preferenceSpec(): Record<string, unknown> {
  const x = {
    type: 'quantitative',
    title: 'share of decided pairs the team wins',
    scale: { domain: [0, 1] },
  };
  const y = { field: 'label', type: 'nominal', title: null, sort: null };
  return {
    width: 420,
    layer: [
      {
        transform: [{ filter: 'datum.lower !== null' }],
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          y,
          x: { field: 'lower', ...x },
          x2: { field: 'upper' },
          color: { field: 'pairs', title: null },
        },
      },
      {
        mark: { type: 'point', filled: true, size: 80 },
        encoding: { y, x: { field: 'winRate', ...x }, color: { field: 'pairs', title: null } },
      },
      {
        data: { values: [{ at: 0.5 }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
        encoding: { x: { field: 'at', type: 'quantitative' } },
      },
    ],
  };
}

function spec(): Record<string, unknown> {
  const x = { field: 'tokens', type: 'quantitative', title: 'processed supervised tokens' };
  const y = { type: 'quantitative', title: 'win rate against the base', scale: { domain: [0, 1] } };
  const color = { field: 'data', type: 'nominal', title: 'data' };
  return {
    width: 420,
    height: 240,
    layer: [
      {
        transform: [{ filter: 'datum.lower !== null' }],
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: { x, y: { field: 'lower', ...y }, y2: { field: 'upper' }, color },
      },
      {
        mark: { type: 'point', filled: true, size: 80 },
        encoding: { x, y: { field: 'winRate', ...y }, color, tooltip: [{ field: 'student' }] },
      },
      {
        mark: { type: 'text', dx: 14, align: 'left' },
        encoding: { x, y: { field: 'winRate', ...y }, text: { field: 'student' } },
      },
      {
        data: { values: [{ at: 0.5 }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
        encoding: { y: { field: 'at', type: 'quantitative' } },
      },
    ],
  };
}

function standInNote(standIn: string): string {
  return `The model is the ${standIn} stand-in: these numbers test the pipeline and say nothing about a real model.`;
}
