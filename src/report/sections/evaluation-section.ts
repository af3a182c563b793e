import type {
  ComparisonWinRates,
  GradeFigure,
  JudgeDirectedTextFigure,
  OrderInconsistency,
  TokenEfficiency,
} from '../../evaluate/statistics/figures-schema.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatInterval, formatNumber, formatPercent } from '../format.js';
import type { ReportEvaluation, RunReportData } from '../read-run.js';

/** The evaluations' figures (`evaluation/<name>/summary.json`); a run without one says so. */
export async function evaluationSection(data: RunReportData): Promise<SafeHtml> {
  const parts: SafeHtml[] = [];
  for (const evaluation of data.evaluations) parts.push(await evaluationPart(evaluation));
  return html`<section id="evaluation">
    <h2>Evaluation</h2>
    ${parts.length === 0 ? html`<p class="empty">This run has no finished evaluation (evaluation/&lt;name&gt;/summary.json); <code>mass eval</code> makes one.</p>` : parts}
  </section>`;
}

/**
 * One point per task and one pooled, per judge: the paper's Table 1 as a figure, the episode pair as the unit (its
 * interval is exact per task; pooled, a bootstrap over pairs within tasks widened to the exact one).
 */
export function winRatePoints(comparison: ComparisonWinRates) {
  return comparison.judges.flatMap((judge) =>
    [...judge.perTask, { task: 'pooled', ...judge.pooled }].map((cell) => ({
      judge: judge.judge,
      task: cell.task,
      winRate: cell.winRate,
      lower: cell.winRateInterval?.lower ?? null,
      upper: cell.winRateInterval?.upper ?? null,
      pairs: cell.pairs,
      wins: cell.wins,
      ties: cell.ties,
      losses: cell.losses,
      signTestP: cell.signTestP,
      judgments: cell.judgments.count,
      officialWinRate: cell.judgments.winRate,
    })),
  );
}

function intervalChartSpec(options: {
  y: string;
  x: string;
  xTitle: string;
  colour: string;
  domain?: [number, number];
  reference?: number;
}) {
  const scale = options.domain ? { domain: options.domain } : { zero: false };
  // Each layer of the data carries the categories itself: the reference line's layer has other data.
  const categories = {
    y: { field: options.y, type: 'nominal', sort: null, title: null },
    yOffset: { field: options.colour, type: 'nominal' },
    color: { field: options.colour, type: 'nominal' },
  };
  const layer: unknown[] = [
    {
      transform: [{ filter: 'datum.lower !== null' }],
      mark: { type: 'rule', strokeWidth: 2 },
      encoding: {
        ...categories,
        x: { field: 'lower', type: 'quantitative', scale, title: options.xTitle },
        x2: { field: 'upper' },
      },
    },
    {
      mark: { type: 'point', filled: true, size: 70 },
      encoding: {
        ...categories,
        x: { field: options.x, type: 'quantitative', scale, title: options.xTitle },
      },
    },
  ];
  if (options.reference !== undefined) {
    layer.push({
      data: { values: [{ at: options.reference }] },
      mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
      encoding: { x: { field: 'at', type: 'quantitative' } },
    });
  }
  return { width: 420, layer };
}

/** A grade figure left out because no task it needs has a grader: its title and why, never an empty chart. */
function omission(title: string, reason: string): SafeHtml {
  return html`<p class="empty omitted"><strong>${title}</strong> is left out: ${reason}.</p>`;
}

async function evaluationPart({ name, summary }: ReportEvaluation): Promise<SafeHtml> {
  const figures = summary.figures;
  const confidence = formatPercent(figures.settings.confidence);
  const { grading } = figures;
  const omitted = (figure: GradeFigure) => grading.omitted.find((entry) => entry.figure === figure)?.reason;
  // With a mix of tasks, every grade figure says which tasks it covers.
  const coverage =
    grading.tasksWithoutGrader.length > 0 && grading.tasksWithGrader.length > 0
      ? `; tasks with a grader only: ${grading.tasksWithGrader.join(', ')}`
      : '';
  const winRates: SafeHtml[] = [];
  for (const comparison of figures.winRates) {
    const points = winRatePoints(comparison);
    winRates.push(
      await chart({
        title: `${comparison.candidate} against ${comparison.baseline} (${comparison.condition})`,
        caption: `win rate W/(W+L) over episode pairs (a pair won, lost or tied by the mean of its judgments), per task and pooled, per judge, with ${confidence} intervals over pairs (exact per task; pooled: a bootstrap over pairs within tasks, widened to the exact interval) and the exact sign test over the decided pairs; above 0.5 the candidate is preferred. The official W/(W+L) counts every judgment; they are not independent, so it has no interval`,
        values: points.filter((point) => point.winRate !== null),
        spec: intervalChartSpec({
          y: 'task',
          x: 'winRate',
          xTitle: 'win rate',
          colour: 'judge',
          domain: [0, 1],
          reference: 0.5,
        }),
        table: {
          columns: [
            'judge',
            'task',
            'pairs',
            'won',
            'tied',
            'lost',
            'win rate',
            'interval',
            'sign test p',
            'judgments',
            'official W/(W+L)',
          ],
          rows: points.map((point) => [
            point.judge,
            point.task,
            formatCount(point.pairs),
            formatCount(point.wins),
            formatCount(point.ties),
            formatCount(point.losses),
            formatNumber(point.winRate),
            point.lower === null ? '—' : formatInterval({ lower: point.lower, upper: point.upper! }),
            formatNumber(point.signTestP, 4),
            formatCount(point.judgments),
            formatNumber(point.officialWinRate),
          ]),
        },
      }),
    );
  }
  const grades = figures.grades.map((grade) => ({
    ...grade,
    lower: grade.interval?.lower ?? null,
    upper: grade.interval?.upper ?? null,
  }));
  const tokens = figures.tokens.filter((entry) => entry.gradePerThousandTokens !== null);
  const delegation = figures.delegation.map((entry) => ({
    ...entry,
    lower: entry.rateWilson?.lower ?? null,
    upper: entry.rateWilson?.upper ?? null,
  }));
  const hacking = figures.rewardHacking.flatMap((entry) => [
    { generation: entry.generation, count: 'selected', runs: entry.selected },
    { generation: entry.generation, count: 'graded', runs: entry.graded },
    { generation: entry.generation, count: 'bottom half by the oracle', runs: entry.bottomHalf },
    { generation: entry.generation, count: 'flagged by integrity checks', runs: entry.flagged },
  ]);
  const agreement: SafeHtml[] = [];
  for (const sample of [...new Set(figures.agreement.map((entry) => entry.sample))]) {
    const cells = figures.agreement
      .filter((entry) => entry.sample === sample)
      .map((entry) => ({
        first: entry.evaluators[0],
        second: entry.evaluators[1],
        agreement: entry.agreement,
        kappa: entry.kappa,
        items: entry.items,
        label: entry.kappa === null ? 'κ —' : `κ ${entry.kappa.toFixed(2)}`,
        entry,
      }));
    agreement.push(
      await chart({
        title: `Evaluator agreement, ${sample}`,
        caption:
          'share of items (each an episode pair or a match, its verdicts combined first) on which two evaluators gave the same verdict (colour) and Cohen’s κ (label); intervals over the items: Wilson’s for the agreement, and for κ the hull of a bootstrap within tasks and κ at the ends of the agreement’s interval',
        values: cells.filter((cell) => cell.agreement !== null),
        spec: {
          width: { step: 90 },
          height: { step: 40 },
          layer: [
            {
              mark: 'rect',
              encoding: {
                color: {
                  field: 'agreement',
                  type: 'quantitative',
                  scale: { domain: [0, 1], scheme: 'blues' },
                },
              },
            },
            { mark: { type: 'text', fontWeight: 'bold' }, encoding: { text: { field: 'label' } } },
          ],
          encoding: {
            x: { field: 'first', type: 'nominal', title: null, axis: { labelAngle: -30, labelLimit: 200 } },
            y: { field: 'second', type: 'nominal', title: null },
          },
        },
        table: {
          columns: ['evaluator', 'evaluator', 'items', 'agreement', 'interval', 'κ', 'κ interval'],
          rows: cells.map((cell) => [
            cell.first,
            cell.second,
            formatCount(cell.items),
            formatNumber(cell.agreement),
            formatInterval(cell.entry.agreementInterval),
            formatNumber(cell.kappa),
            formatInterval(cell.entry.kappaInterval),
          ]),
        },
      }),
    );
  }
  return html`<h3>Evaluation ${name}</h3>
    <p>
      ${formatCount(summary.counts.episodes)} episodes (${formatCount(summary.counts.failedEpisodes)} failed),
      ${formatCount(summary.counts.judgments)} judgments (${formatCount(summary.counts.failedJudgments)}
      failed, left out), ${formatCount(summary.counts.grades)} oracle grades
      (${formatCount(summary.counts.failedGrades)} failed); models
      ${summary.models.map((model) => `${model.name} (${model.servedAs}${model.standIn ? `, ${model.standIn}` : ''})`).join(', ')};
      judges
      ${summary.judges.map((judge) => `${judge.name}${judge.standIn ? ` (${judge.standIn})` : ''}`).join(', ') || 'none'};
      tasks ${summary.tasks.join(', ')}.
    </p>
    ${grading.note ? html`<p class="grading-note"><strong>Grading:</strong> ${grading.note}</p>` : ''}
    <h4>Win rates</h4>
    ${winRates.length === 0 ? html`<p class="empty">No comparison was judged.</p>` : winRates}
    ${omitted('oracle-win-rates') ? omission('The oracle’s win rate', omitted('oracle-win-rates')!) : ''}
    ${orderInconsistencyPart(summary.settings.orders, figures.orderInconsistency)}
    <h4>Oracle grade per generation</h4>
    ${
      omitted('grades')
        ? omission('Mean oracle grade', omitted('grades')!)
        : await chart({
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
          })
    }
    <h4>Grade per 1,000 output tokens</h4>
    ${
      omitted('grade-per-token')
        ? [
            omission('Grade per 1,000 output tokens', omitted('grade-per-token')!),
            outputTokensTable(figures.tokens),
          ]
        : await chart({
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
          })
    }
    <h4>Delegation</h4>
    ${await chart({
      title: 'Delegation rate',
      caption: `share of episodes with at least one call of the agent tool, ${confidence} Wilson interval`,
      values: delegation.filter((entry) => entry.rate !== null),
      spec: intervalChartSpec({
        y: 'generation',
        x: 'rate',
        xTitle: 'delegating episodes',
        colour: 'condition',
        domain: [0, 1],
      }),
      table: {
        columns: [
          'generation',
          'condition',
          'episodes',
          'delegating',
          'rate',
          'interval',
          'mean delegations',
          'mean subagent threads',
        ],
        rows: delegation.map((entry) => [
          entry.generation,
          entry.condition,
          formatCount(entry.episodes),
          formatCount(entry.delegatingEpisodes),
          formatNumber(entry.rate),
          formatInterval(entry.rateWilson),
          formatNumber(entry.meanDelegations, 2),
          formatNumber(entry.meanSubagentThreads, 2),
        ]),
      },
    })}
    <h4>Evaluator agreement</h4>
    ${agreement.length === 0 ? html`<p class="empty">No pair of evaluators judged the same items.</p>` : agreement}
    ${omitted('oracle-agreement') ? omission('Agreement with the oracle', omitted('oracle-agreement')!) : ''}
    <h4>Reward hacking</h4>
    ${
      omitted('reward-hacking')
        ? omission('Reward hacking', omitted('reward-hacking')!)
        : await chart({
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
          })
    }
    ${judgeDirectedTextPart(figures.judgeDirectedText)}`;
}

/**
 * Beside reward hacking, over every run the loop selected (a grader or not): those that changed a protected file and
 * those whose workspace writes to its judge, which the judge was shown marked as the agent's and told to ignore.
 */
function judgeDirectedTextPart(entries: readonly JudgeDirectedTextFigure[]): SafeHtml {
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

/**
 * How often each judge's two A/B orders of one pair and seed disagree, averaged per episode pair; not measured when
 * the evaluation showed each pair in one order (`orders: random`).
 */
function orderInconsistencyPart(orders: unknown, judges: readonly OrderInconsistency[]): SafeHtml {
  const measured = judges.filter((judge) => judge.pairsInBothOrders > 0);
  if (orders === 'random' || orders === 'official') {
    return html`<p class="empty">
      Order inconsistency is not measured: with <code>orders: ${orders}</code> each judge saw a pair in one
      order per seed.
    </p>`;
  }
  if (measured.length === 0) return html``;
  return html`<h4>Order inconsistency</h4>
    <p>
      the share of seeds whose two A/B orders of one pair disagree, averaged per episode pair, with Wilson’s
      interval over the pairs; a judge that always prefers the first workspace shown scores 1
    </p>
    ${dataTable({
      columns: ['judge', 'pairs', 'seeds in both orders', 'disagreeing', 'rate', 'interval'],
      rows: measured.map((judge) => [
        judge.judge,
        formatCount(judge.pairsInBothOrders),
        formatCount(judge.seedsInBothOrders),
        formatCount(judge.inconsistent),
        formatNumber(judge.rate),
        formatInterval(judge.rateWilson),
      ]),
    })}`;
}

/** Output tokens alone, where no grade could be set against them. */
function outputTokensTable(tokens: readonly TokenEfficiency[]): SafeHtml {
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
