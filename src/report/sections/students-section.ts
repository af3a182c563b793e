import { html, type SafeHtml } from '../../html/html.js';
import { STUDENT_KIND_NAMES } from '../../students/student-datasets.js';
import { percentCell, tokenCount } from '../../students/students-table.js';
import type { StudentsRecord } from '../../students/students.js';
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
  return html`<h3>Experiment ${record.name}: ${record.generation}’s collections, base ${record.base}</h3>
    <p class="muted">
      Trainer: ${record.trainer}; evaluation: the ${record.evaluation.condition} task,
      ${formatCount(record.evaluation.rollouts)} rollout(s) on each of
      ${formatCount(record.evaluation.tasks.length)} task(s), judges: ${record.evaluation.judges.join(', ')}.
      ${record.standIn === null ? '' : html`<strong>${standInNote(record.standIn)}</strong>`}
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
