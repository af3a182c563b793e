import type {
  ComparisonWinRates,
  EvaluationFigures,
  OrderInconsistency,
} from '../../records/evaluation-figures.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatInterval, formatNumber } from '../format.js';
import { intervalChartSpec } from './evaluation-interval-chart.js';

// The evaluation's figures of judging: win rates, order inconsistency and the evaluators' agreement.

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

/** One chart of win rates per comparison, each judge's per task and pooled. */
export async function winRateCharts(figures: EvaluationFigures, confidence: string): Promise<SafeHtml[]> {
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
  return winRates;
}

/** One chart per sample of items: how often each two evaluators agree, and Cohen's κ. */
export async function agreementCharts(figures: EvaluationFigures): Promise<SafeHtml[]> {
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
  return agreement;
}

/**
 * How often each judge's two A/B orders of one pair and seed disagree, averaged per episode pair; not measured when
 * the evaluation showed each pair in one order (`orders: random`).
 */
export function orderInconsistencyPart(orders: unknown, judges: readonly OrderInconsistency[]): SafeHtml {
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
