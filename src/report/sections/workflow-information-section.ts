import { WORKFLOW_COMPONENTS } from '../../workflow/workflow-components.js';
import type {
  InformationEstimate,
  SeriesInformation,
  WorkflowInformation,
} from '../../records/workflow-information-record.js';
import {
  adjustedCell,
  componentPairs,
  methodLines,
  unadjustedCell,
} from '../../records/workflow-information-table.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatInterval, formatNumber } from '../format.js';
import type { RunReportData } from '../read-run.js';

/** The two points of the search the chart compares, as the paper's Figure 5 does. */
const COMPARED = ['first', 'final'] as const;

interface ChartRow {
  category: string;
  series: string;
  adjusted: number;
  lower: number | null;
  upper: number | null;
}

/**
 * Where each analysed generation's designs carry their task information (the paper's Figure 5, from
 * `mass analyze workflows`): per component, the adjusted mutual information between its text and the task, first
 * design against final, with intervals over tasks; the dependence between an agent's components the same way; every
 * iteration in a table; and the sample's limits, stated beside the numbers.
 */
export async function workflowInformationSection(data: RunReportData): Promise<SafeHtml> {
  const analyses = data.workflowInformation;
  return html`<section id="workflow-information">
    <h2>Where the designs carry their task information</h2>
    ${
      analyses.length === 0
        ? html`<p class="empty">
            No generation has been analysed yet: <code>mass analyze workflows &lt;run-dir&gt;</code> writes
            analysis/workflows/&lt;generation&gt;.json from the search records.
          </p>`
        : html`<p>
              Each design’s components (an agent’s role, instruction, contract, and the hops it takes part in)
              and each task’s description are embedded; the mutual information between a component’s
              embeddings and its task’s says how much that component’s text tells about the task. The adjusted
              value subtracts what shuffled tasks give, so about 0 means no information. The paper finds task
              information moving into contracts and hops, out of roles and instructions, and the components
              growing less dependent on each other, from the first design to the final one.
            </p>
            ${await Promise.all(analyses.map(generationPart))}`
    }
  </section>`;
}

async function generationPart(record: WorkflowInformation): Promise<SafeHtml> {
  const compared = COMPARED.map((label) => record.series.find((series) => series.label === label)).filter(
    (series): series is SeriesInformation => series !== undefined,
  );
  const information: ChartRow[] = compared.flatMap((series) =>
    series.information.flatMap((entry) => chartRow(entry.component, series.label, entry)),
  );
  const dependence: ChartRow[] = compared.flatMap((series) =>
    series.dependence.flatMap((entry) => chartRow(`${entry.first}–${entry.second}`, series.label, entry)),
  );
  const pairs = componentPairs();
  return html`<h3>Generation ${record.generation}: ${formatCount(record.tasks.length)} tasks</h3>
    ${methodLines(record).map((line) => html`<p class="muted">${line}</p>`)}
    ${await chart({
      title: `Task information per component, first design against final (${record.embedding.name})`,
      caption:
        'adjusted mutual information in nats between each component’s text and its task, with its percentile bootstrap interval over tasks; about 0: the component tells nothing about its task',
      values: information,
      spec: groupedSpec('component', 'task information, adjusted (nats)'),
      table: estimateTable(compared, 'information'),
    })}
    ${await chart({
      title: `Dependence between an agent’s components, first design against final (${record.embedding.name})`,
      caption:
        'adjusted mutual information in nats between two components of the same agent, with its interval over tasks',
      values: dependence,
      spec: groupedSpec('components', 'dependence, adjusted (nats)'),
      table: estimateTable(compared, 'dependence'),
    })}
    <details>
      <summary>Every iteration</summary>
      ${dataTable({
        columns: [
          'series',
          'designs',
          ...WORKFLOW_COMPONENTS.map((component) => `${component}: adjusted [interval]`),
        ],
        rows: record.series.map((series) => [
          series.label,
          formatCount(series.versions.length),
          ...WORKFLOW_COMPONENTS.map((component) =>
            adjustedCell(series.information.find((entry) => entry.component === component)),
          ),
        ]),
      })}
      ${dataTable({
        columns: ['series', ...pairs.map(([first, second]) => `${first}–${second}`)],
        rows: record.series.map((series) => [
          series.label,
          ...pairs.map(([first, second]) =>
            adjustedCell(series.dependence.find((entry) => entry.first === first && entry.second === second)),
          ),
        ]),
      })}
      ${dataTable({
        columns: [
          'series',
          ...WORKFLOW_COMPONENTS.map((component) => `${component}: unadjusted − baseline, p`),
        ],
        rows: record.series.map((series) => [
          series.label,
          ...WORKFLOW_COMPONENTS.map((component) =>
            unadjustedCell(series.information.find((entry) => entry.component === component)),
          ),
        ]),
      })}
    </details>
    <p><strong>Limits of this sample.</strong></p>
    <ul>
      ${record.limits.map((limit) => html`<li>${limit}</li>`)}
    </ul>
    ${
      record.notes.length > 0
        ? html`<details>
            <summary>Left out (${formatCount(record.notes.length)})</summary>
            <ul>
              ${record.notes.map((entry) => html`<li>${entry}</li>`)}
            </ul>
          </details>`
        : ''
    }`;
}

function chartRow(category: string, series: string, estimate: InformationEstimate): ChartRow[] {
  if (estimate.adjusted === null) return [];
  return [
    {
      category,
      series,
      adjusted: estimate.adjusted,
      lower: estimate.adjustedInterval?.[0] ?? null,
      upper: estimate.adjustedInterval?.[1] ?? null,
    },
  ];
}

function groupedSpec(title: string, xTitle: string): Record<string, unknown> {
  const categories = {
    y: { field: 'category', type: 'nominal', sort: null, title },
    yOffset: { field: 'series', type: 'nominal', sort: [...COMPARED] },
    color: { field: 'series', type: 'nominal', sort: [...COMPARED], title: 'design' },
  };
  const x = { type: 'quantitative', title: xTitle };
  return {
    width: 420,
    layer: [
      {
        transform: [{ filter: 'datum.lower !== null' }],
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: { ...categories, x: { field: 'lower', ...x }, x2: { field: 'upper' } },
      },
      {
        mark: { type: 'point', filled: true, size: 70 },
        encoding: { ...categories, x: { field: 'adjusted', ...x } },
      },
      {
        data: { values: [{ at: 0 }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
        encoding: { x: { field: 'at', type: 'quantitative' } },
      },
    ],
  };
}

function estimateTable(compared: SeriesInformation[], kind: 'information' | 'dependence') {
  const rows = compared.flatMap((series) =>
    (kind === 'information'
      ? series.information.map((entry) => ({ name: entry.component, entry }))
      : series.dependence.map((entry) => ({ name: `${entry.first}–${entry.second}`, entry }))
    ).map(({ name, entry }) => [
      name,
      series.label,
      formatCount(entry.samples),
      formatCount(entry.tasks),
      formatNumber(entry.mi),
      formatNumber(entry.baseline),
      formatNumber(entry.adjusted),
      formatInterval(
        entry.adjustedInterval && { lower: entry.adjustedInterval[0], upper: entry.adjustedInterval[1] },
      ),
      formatNumber(entry.pValue, 2),
      entry.skipped ?? '',
    ]),
  );
  return {
    columns: [
      kind === 'information' ? 'component' : 'components',
      'design',
      kind === 'information' ? 'agents' : 'agents with both',
      'tasks',
      'unadjusted',
      'shuffle baseline',
      'adjusted',
      'interval of adjusted',
      'p',
      'left out because',
    ],
    rows,
  };
}
