import type { BenchmarkSummary } from '../../records/benchmark-records.js';
import { OFFICIAL_COLUMNS, officialCaption, officialRows } from '../../records/benchmark-official-figures.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatInterval, formatNumber, formatPercent } from '../format.js';
import type { RunReportData } from '../read-run.js';

/**
 * Public benchmarks in Harbor's task format (`mass benchmark`, the paper's Figure 3): per benchmark, each
 * generation's reward per 1,000 output tokens as a ratio to the first generation's with its interval over tasks, then
 * the figures, every task's row and the tasks skipped with their reasons.
 */
export async function benchmarkSection(data: RunReportData): Promise<SafeHtml> {
  return html`<section id="benchmarks">
    <h2>Public benchmarks</h2>
    ${
      data.benchmarks.length === 0
        ? html`<p class="empty">
            No benchmark has been run:
            <code>mass benchmark --config &lt;run.yaml&gt; --tasks &lt;dataset&gt;</code>
            runs Harbor-format tasks and writes benchmarks/&lt;benchmark&gt;/summary-&lt;agent&gt;.json.
          </p>`
        : html`<p>
              Each trial's workspace is scored by its task's own verifier (tests/test.sh, run in a fresh
              sandbox after the agent). Reward per 1,000 output tokens is Σ reward / Σ output tokens over a
              generation's trials, every thread of a team counted; its ratio to the first generation resamples
              tasks, the task being the unit.
            </p>
            ${await Promise.all(data.benchmarks.map(benchmarkPart))}`
    }
  </section>`;
}

async function benchmarkPart(summary: BenchmarkSummary): Promise<SafeHtml> {
  const toy = summary.standIn === null ? '' : ` (${summary.standIn} output: says nothing about a real model)`;
  const ratios = summary.figures.flatMap((figure) =>
    figure.ratioToReference?.value == null
      ? []
      : [
          {
            label: figure.label,
            ratio: figure.ratioToReference.value,
            lower: figure.ratioToReference.interval?.lower ?? null,
            upper: figure.ratioToReference.interval?.upper ?? null,
          },
        ],
  );
  return html`<h3>${summary.benchmark}: agent ${summary.agent}${toy}</h3>
    <p class="muted">
      ${formatCount(summary.tasks.length)} tasks, ${formatCount(summary.trialsPerTask)} trial(s) per task and
      label, paired by sampling seed; from ${summary.sources.join(', ')}
    </p>
    ${
      summary.reference === null
        ? ''
        : await chart({
            title: `Reward per output token against ${summary.reference}`,
            caption: `each generation's reward per 1,000 output tokens over ${summary.reference}'s, with its bootstrap interval over tasks; 1: as efficient as ${summary.reference}`,
            values: ratios,
            spec: ratioSpec(),
            table: {
              columns: ['generation', 'ratio', 'interval'],
              rows: ratios.map((row) => [
                row.label,
                formatNumber(row.ratio, 2),
                formatInterval(row.lower === null ? null : { lower: row.lower, upper: row.upper! }, 2),
              ]),
            },
          })
    }
    ${dataTable({
      columns: [
        'label',
        'trials',
        'mean reward',
        'interval over tasks',
        'unscored',
        'output tokens / trial',
        'reward / 1k tokens',
        `ratio to ${summary.reference ?? '—'}`,
        'delegation rate',
      ],
      rows: summary.figures.map((figure) => [
        figure.label,
        formatCount(figure.trials),
        formatNumber(figure.meanReward),
        formatInterval(figure.meanRewardInterval),
        formatCount(figure.unscored),
        formatNumber(figure.meanOutputTokens, 0),
        formatNumber(figure.rewardPerThousandTokens),
        figure.ratioToReference?.value == null
          ? '—'
          : `${formatNumber(figure.ratioToReference.value, 2)} ${formatInterval(figure.ratioToReference.interval, 2)}`,
        formatPercent(figure.delegationRate),
      ]),
    })}
    <p>${officialCaption(summary.official)}</p>
    ${dataTable({ columns: OFFICIAL_COLUMNS, rows: officialRows(summary.official) })}
    <details>
      <summary>Per task</summary>
      ${dataTable({
        columns: ['task', 'label', 'trials', 'mean reward', 'output tokens / trial', 'verifications'],
        rows: summary.perTask.map((row) => [
          row.task,
          row.label,
          formatCount(row.trials),
          formatNumber(row.meanReward, 2),
          formatNumber(row.meanOutputTokens, 0),
          Object.entries(row.statuses)
            .map(([status, count]) => `${status} ${count}`)
            .join(', '),
        ]),
      })}
    </details>
    ${
      summary.skipped.length === 0
        ? ''
        : html`<p>Skipped (not run here):</p>
            <ul>
              ${summary.skipped.map((entry) => html`<li><code>${entry.task}</code>: ${entry.reason}</li>`)}
            </ul>`
    }`;
}

function ratioSpec(): Record<string, unknown> {
  const y = { field: 'label', type: 'nominal', sort: null, title: 'generation' };
  const x = { type: 'quantitative', title: 'reward per output token, ratio to the reference' };
  return {
    width: 420,
    layer: [
      {
        transform: [{ filter: 'datum.lower !== null' }],
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: { y, x: { field: 'lower', ...x }, x2: { field: 'upper' } },
      },
      { mark: { type: 'point', filled: true, size: 70 }, encoding: { y, x: { field: 'ratio', ...x } } },
      {
        data: { values: [{ at: 1 }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
        encoding: { x: { field: 'at', type: 'quantitative' } },
      },
    ],
  };
}
