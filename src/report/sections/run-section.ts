import { describeCost } from '../../cost/cost-total.js';
import YAML from 'yaml';

import { isUnaddressed } from '../../config/endpoint.js';
import { html, type SafeHtml } from '../../html/html.js';
import { datasetPath } from '../../store/run-paths.js';
import { chart, dataTable } from '../chart.js';
import { displayUrl, formatCount, formatDuration, withoutUrlCredentials } from '../format.js';
import type { RunReportData } from '../read-run.js';

/** The run: its configuration, the generations L0 → L1 → L2, the wall time and the tokens each role used. */
export async function runSection(data: RunReportData): Promise<SafeHtml> {
  return html`<section id="run">
    <h2>Run</h2>
    ${configuration(data)} ${generations(data)} ${wallTime(data)} ${await tokens(data)}
  </section>`;
}

function configuration(data: RunReportData): SafeHtml {
  const { value, text, error } = data.config;
  if (!value) {
    return html`<h3>Configuration</h3>
      <p class="muted">config.yaml: ${error ?? 'missing'}.</p>
      ${
        text
          ? html`<details>
              <summary>config.yaml as written</summary>
              <pre>${withoutUrlCredentials(text)}</pre>
            </details>`
          : ''
      }`;
  }
  const roles = (['executor', 'judge', 'optimizer'] as const).map((role) => {
    const endpoint = value.roles[role];
    if (!endpoint) return [role, 'the executor’s', '', ''];
    return [
      role,
      endpoint.model,
      endpoint.provider,
      isUnaddressed(endpoint) ? `served by mass (model ${value.model.kind})` : displayUrl(endpoint.baseUrl),
    ];
  });
  const settings: Array<[string, string]> = [
    ['model', value.model.kind],
    ['suite', value.suite],
    ['tasks', value.tasks?.join(', ') ?? 'every train task of the suite'],
    ['seed', String(value.seed)],
    [
      'search',
      `${value.search.iterations} iteration${value.search.iterations === 1 ? '' : 's'}, champion rule ${value.search.championRule}, judge mode ${value.search.judgeMode}`,
    ],
    ['sandbox', value.sandbox],
  ];
  return html`<h3>Configuration</h3>
    ${dataTable({ columns: ['setting', 'value'], rows: settings })}
    ${dataTable({ columns: ['role', 'model', 'provider', 'endpoint'], rows: roles })}
    <details>
      <summary>The whole configuration (config.yaml, defaults filled in)</summary>
      <pre>${withoutUrlCredentials(YAML.stringify(value))}</pre>
    </details>`;
}

function generations(data: RunReportData): SafeHtml {
  if (data.generations.length === 0) {
    return html`<h3>Generations</h3>
      <p class="empty">No generation is registered yet (train/registry.json).</p>`;
  }
  const datasets = new Map(
    data.rsiSummary?.generations.map((entry) => [entry.dataset?.dir, entry.dataset]) ?? [],
  );
  const statsOf = new Map(data.datasets.map((dataset) => [datasetPath(dataset.generation), dataset.stats]));
  const rows = data.generations.map((generation) => {
    const stats = generation.datasetId ? statsOf.get(generation.datasetId) : undefined;
    const summary = generation.datasetId ? datasets.get(generation.datasetId) : undefined;
    const train = stats?.splits.train;
    const validation = stats?.splits.validation;
    return [
      generation.name,
      generation.parent ?? '— (base)',
      generation.servedAs,
      generation.datasetId ?? '—',
      train ? formatCount(train.episodes) : summary ? formatCount(summary.trainEpisodes) : '—',
      validation ? formatCount(validation.episodes) : summary ? formatCount(summary.validationEpisodes) : '—',
      train ? formatCount(train.total.windows) : summary ? formatCount(summary.trainWindows) : '—',
      train
        ? formatCount(train.total.supervisedTokens)
        : summary
          ? formatCount(summary.supervisedTokens)
          : '—',
      generation.metrics?.steps === null || generation.metrics === null
        ? '—'
        : formatCount(generation.metrics.steps),
      generation.createdAt,
    ];
  });
  return html`<h3>Generations</h3>
    <p>${data.generations.map((generation) => generation.name).join(' → ')}</p>
    ${dataTable({
      columns: [
        'generation',
        'parent',
        'served as',
        'trained on',
        'train episodes',
        'validation episodes',
        'train windows',
        'supervised tokens',
        'training steps',
        'registered',
      ],
      rows,
    })}`;
}

function wallTime(data: RunReportData): SafeHtml {
  const time = data.wallTime;
  if (!time)
    return html`<h3>Wall time</h3>
      <p class="empty">Unknown: no step has been recorded.</p>`;
  return html`<h3>Wall time</h3>
    ${dataTable({
      columns: ['first step started', 'last step ended', 'wall time', 'steps', 'unfinished steps'],
      rows: [
        [
          time.startedAt,
          time.endedAt ?? '—',
          formatDuration(time.elapsedMs),
          formatCount(time.steps),
          formatCount(time.unfinishedSteps),
        ],
      ],
    })}
    <p class="muted">
      From the first step’s start to the last one’s end, pauses between invocations included. An unfinished
      step is running now, or was left half-done by a run that was stopped (it is redone when the run goes
      on).
    </p>`;
}

async function tokens(data: RunReportData): Promise<SafeHtml> {
  const values = data.tokens.flatMap((row) => [
    { stage: row.stage, role: row.role, kind: 'prompt', tokens: row.promptTokens },
    { stage: row.stage, role: row.role, kind: 'completion', tokens: row.completionTokens },
  ]);
  return html`<h3>Tokens per role</h3>
    ${await chart({
      title: 'Completion tokens per role and stage',
      caption: 'what each role wrote, per generation’s loop (search, tournament) and per evaluation',
      values: values.filter((value) => value.kind === 'completion'),
      spec: {
        mark: 'bar',
        encoding: {
          y: { field: 'stage', type: 'nominal', title: null },
          x: { field: 'tokens', type: 'quantitative', title: 'completion tokens', stack: 'zero' },
          color: { field: 'role', type: 'nominal', scale: { domain: ['executor', 'judge', 'optimizer'] } },
        },
        width: 560,
      },
      table: {
        columns: ['stage', 'role', 'model calls', 'prompt tokens', 'completion tokens', 'cost'],
        rows: data.tokens.map((row) => [
          row.stage,
          row.role,
          formatCount(row.calls),
          formatCount(row.promptTokens),
          formatCount(row.completionTokens),
          describeCost(row.cost),
        ]),
      },
    })}`;
}
