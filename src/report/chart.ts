import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

import { html, trustedMarkup, type HtmlValue, type SafeHtml } from '../html/html.js';
import { assertInertSvg } from './inert-svg.js';

/** A figure's data as a table: the column titles and, per row, one cell per column. */
export interface DataTable {
  columns: readonly string[];
  rows: ReadonlyArray<readonly HtmlValue[]>;
}

interface ChartOptions {
  title: string;
  /** A Vega-Lite specification without its data; `values` are put in inline. */
  spec: Record<string, unknown>;
  /** The rows drawn; with none, the chart is replaced by a line saying so. */
  values: readonly object[];
  table: DataTable;
  /** One sentence under the title: what is drawn and how to read it. */
  caption?: string;
}

const chartConfig = {
  font: 'system-ui, sans-serif',
  axis: { labelFontSize: 11, titleFontSize: 12, labelLimit: 360 },
  axisX: { labelAngle: 0 },
  legend: { labelFontSize: 11, titleFontSize: 12, labelLimit: 280 },
  view: { stroke: null },
};

/** Compiles a Vega-Lite chart and renders it to SVG here, so the report needs no script and no network. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const compiled = vegaLite.compile({ ...spec, config: { ...chartConfig, ...spec.config } } as TopLevelSpec);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    assertInertSvg(svg);
    return svg;
  } finally {
    view.finalize();
  }
}

/** A chart as inline SVG with its data as a table under it. */
export async function chart(options: ChartOptions): Promise<SafeHtml> {
  if (options.values.length === 0) {
    return html`<p class="empty"><strong>${options.title}</strong>: nothing to draw yet.</p>`;
  }
  const svg = await renderSvg({ ...options.spec, data: { values: options.values } } as TopLevelSpec);
  return html`<figure class="chart">
    <figcaption>
      <strong>${options.title}</strong>${options.caption ? html` — ${options.caption}` : ''}
    </figcaption>
    <div class="chart-svg">${trustedMarkup(svg)}</div>
    ${dataTable(options.table, 'chart-data')}
  </figure>`;
}

export function dataTable(table: DataTable, className = 'data'): SafeHtml {
  return html`<table class="${className}">
    <thead>
      <tr>
        ${table.columns.map((column) => html`<th>${column}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${table.rows.map(
        (row) =>
          html`<tr>
            ${row.map((cell) => html`<td>${cell}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}
