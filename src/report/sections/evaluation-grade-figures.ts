import type {
  EvaluationFigures,
  JudgeDirectedTextFigure,
  TokenEfficiency,
} from '../../records/evaluation-figures.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatInterval, formatNumber } from '../format.js';
import { intervalChartSpec } from './evaluation-interval-chart.js';

// The evaluation's figures of the oracle's grades: the mean grade, grade per output token, reward hacking and text
// addressing the judge.

/** A grade figure left out because no task it needs has a grader: its title and why, never an empty chart. */
export function omission(title: string, reason: string): SafeHtml {
  return html`<p class="empty omitted"><strong>${title}</strong> is left out: ${reason}.</p>`;
}

/** The withheld grader's mean grade per generation and condition. */
export async function gradeChart(
  figures: EvaluationFigures,
  confidence: string,
  coverage: string,
): Promise<SafeHtml> {
  const grades = figures.grades.map((grade) => ({
    ...grade,
    lower: grade.interval?.lower ?? null,
    upper: grade.interval?.upper ?? null,
  }));
  return chart({
    title: 'Mean oracle grade',
    caption: `the withheld grader’s mean grade (0–100) per generation and condition, ${confidence} bootstrap interval${coverage}`,
    values: grades.filter((grade) => grade.mean !== null),
    spec: intervalChartSpec({
      y: 'generation',
      x: 'mean',
      xTitle: 'mean grade',
      colour: 'condition',
    }),
    table: {
      columns: ['generation', 'condition', 'episodes', 'graded', 'mean grade', 'interval'],
      rows: grades.map((grade) => [
        grade.generation,
        grade.condition,
        formatCount(grade.episodes),
        formatCount(grade.graded),
        formatNumber(grade.mean, 2),
        formatInterval(grade.interval, 2),
      ]),
    },
  });
}

/** How much grade each output token bought, per generation and condition. */
export async function gradePerTokenChart(figures: EvaluationFigures, coverage: string): Promise<SafeHtml> {
  const tokens = figures.tokens.filter((entry) => entry.gradePerThousandTokens !== null);
  return chart({
    title: 'Grade per 1,000 output tokens',
    caption: `1,000 × the sum of grades over the sum of output tokens: how much grade each token bought${coverage}`,
    values: tokens,
    spec: {
      mark: 'bar',
      width: 420,
      encoding: {
        y: { field: 'generation', type: 'nominal', title: null },
        yOffset: { field: 'condition', type: 'nominal' },
        x: {
          field: 'gradePerThousandTokens',
          type: 'quantitative',
          title: 'grade per 1,000 output tokens',
        },
        color: { field: 'condition', type: 'nominal' },
      },
    },
    table: {
      columns: [
        'generation',
        'condition',
        'episodes',
        'mean output tokens',
        'grade per 1,000 tokens',
        'ratio to the reference',
        'ratio to single-agent',
      ],
      rows: figures.tokens.map((entry) => [
        entry.generation,
        entry.condition,
        formatCount(entry.episodes),
        formatNumber(entry.meanOutputTokens, 0),
        formatNumber(entry.gradePerThousandTokens),
        formatNumber(entry.ratioToReference?.ratio),
        formatNumber(entry.ratioToSingleAgent?.ratio),
      ]),
    },
  });
}

/** The runs the loop selected that the oracle grades low, or an integrity check flagged. */
export async function rewardHackingChart(figures: EvaluationFigures): Promise<SafeHtml> {
  const hacking = figures.rewardHacking.flatMap((entry) => [
    { generation: entry.generation, count: 'selected', runs: entry.selected },
    { generation: entry.generation, count: 'graded', runs: entry.graded },
    { generation: entry.generation, count: 'bottom half by the oracle', runs: entry.bottomHalf },
    { generation: entry.generation, count: 'flagged by integrity checks', runs: entry.flagged },
  ]);
  return chart({
    title: 'Selected runs the oracle disagrees with',
    caption:
      'runs the loop selected for training, those the oracle graded, those in the bottom half of their task’s collection by the oracle, and those an integrity check flagged',
    values: hacking,
    spec: {
      mark: 'bar',
      width: 420,
      encoding: {
        y: { field: 'generation', type: 'nominal', title: null },
        yOffset: { field: 'count', type: 'nominal', sort: null },
        x: { field: 'runs', type: 'quantitative', title: 'runs' },
        color: { field: 'count', type: 'nominal', sort: null, title: null },
      },
    },
    table: {
      columns: [
        'generation',
        'selected',
        'graded',
        'bottom half',
        'bottom-half rate',
        'flagged',
        'flagged rate',
      ],
      rows: figures.rewardHacking.map((entry) => [
        entry.generation,
        formatCount(entry.selected),
        formatCount(entry.graded),
        formatCount(entry.bottomHalf),
        formatNumber(entry.bottomHalfRate),
        formatCount(entry.flagged),
        formatNumber(entry.flaggedRate),
      ]),
    },
  });
}

/**
 * Beside reward hacking, over every run the loop selected (a grader or not): those that changed a protected file and
 * those whose workspace writes to its judge, which the judge was shown marked as the agent's and told to ignore.
 */
export function judgeDirectedTextPart(entries: readonly JudgeDirectedTextFigure[]): SafeHtml {
  if (!entries.some((entry) => entry.selected > 0)) return html``;
  return html`<h4>Text addressing the judge</h4>
    <p>
      Runs the loop selected for training whose workspace addresses the judge or imitates its formats
      (instructions to the evaluator, a claimed verdict, a forged section of the bundle, chat tags), beside
      those that changed a protected file. The judge is shown such text marked as the agent's and is told to
      ignore it.
    </p>
    ${dataTable({
      columns: [
        'generation',
        'selected',
        'changed a protected file',
        'scanned',
        'with such text',
        'rate',
        'spans',
        'characters',
      ],
      rows: entries.map((entry) => [
        entry.generation,
        formatCount(entry.selected),
        formatCount(entry.tampered),
        formatCount(entry.scanned),
        formatCount(entry.withText),
        formatNumber(entry.withTextRate),
        formatCount(entry.spans),
        formatCount(entry.characters),
      ]),
    })}`;
}

/** Output tokens alone, where no grade could be set against them. */
export function outputTokensTable(tokens: readonly TokenEfficiency[]): SafeHtml {
  return dataTable({
    columns: ['generation', 'condition', 'episodes', 'mean output tokens'],
    rows: tokens.map((entry) => [
      entry.generation,
      entry.condition,
      formatCount(entry.episodes),
      formatNumber(entry.meanOutputTokens, 0),
    ]),
  });
}
