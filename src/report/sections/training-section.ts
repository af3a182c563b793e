import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount } from '../format.js';
import type { GenerationDataset, RunReportData } from '../read-run.js';

const roles = ['orchestrator', 'subagent', 'auxiliary'] as const;

/** Training data per generation (supervised tokens per task and role, windows) and the trainer's loss curves. */
export async function trainingSection(data: RunReportData): Promise<SafeHtml> {
  const datasets: SafeHtml[] = [];
  for (const dataset of data.datasets) datasets.push(await datasetPart(dataset));
  const curves: SafeHtml[] = [];
  for (const generation of data.generations) {
    if (generation.parent === null) continue;
    const metrics = generation.metrics;
    const title = `${generation.name}, trained from ${generation.parent} on ${generation.datasetId ?? '—'}`;
    const processed = metrics?.supervisedTokensProcessed;
    const facts = html`<p>
      ${metrics?.steps === null || !metrics ? 'steps unknown' : `${formatCount(metrics.steps)} step${metrics.steps === 1 ? '' : 's'}`}${
        processed === null || processed === undefined
          ? ''
          : `, ${formatCount(processed)} supervised tokens processed`
      }${metrics?.chosenCheckpoint ? `, checkpoint kept: step ${metrics.chosenCheckpoint.step}` : ''}.
    </p>`;
    const points = [
      ...(metrics?.trainLoss ?? []).map((point) => ({ step: point.step, loss: point.loss, split: 'train' })),
      ...(metrics?.validationLoss ?? []).map((point) => ({
        step: point.step,
        loss: point.loss,
        split: 'validation',
      })),
    ];
    curves.push(
      html`<h4>${title}</h4>
        ${facts}${
          points.length === 0
            ? html`<p class="empty">
                The trainer reported no loss curve (the toy trainer and external commands that print no
                metrics do not).
              </p>`
            : await chart({
                title: `Loss, ${generation.name}`,
                caption: 'mean loss per supervised token at each logged step',
                values: points,
                spec: {
                  width: 480,
                  height: 220,
                  mark: { type: 'line', point: true },
                  encoding: {
                    x: { field: 'step', type: 'quantitative' },
                    y: { field: 'loss', type: 'quantitative', scale: { zero: false } },
                    color: { field: 'split', type: 'nominal' },
                  },
                },
                table: {
                  columns: ['split', 'step', 'loss'],
                  rows: points.map((point) => [point.split, String(point.step), point.loss.toFixed(4)]),
                },
              })
        }`,
    );
  }
  return html`<section id="training">
    <h2>Training data and training</h2>
    ${datasets.length === 0 ? html`<p class="empty">No training data has been built yet (distill/&lt;generation&gt;/dataset/stats.json).</p>` : datasets}
    <h3>Training</h3>
    ${curves.length === 0 ? html`<p class="empty">No generation has been trained yet.</p>` : curves}
  </section>`;
}

async function datasetPart({ generation, stats }: GenerationDataset): Promise<SafeHtml> {
  const values = Object.entries(stats.splits).flatMap(([split, counts]) =>
    Object.entries(counts.perTask).flatMap(([task, perTask]) =>
      roles.map((role) => ({
        split,
        task,
        role,
        tokens: perTask.perRole[role].supervisedTokens,
        windows: perTask.perRole[role].windows,
      })),
    ),
  );
  const splitRows = Object.entries(stats.splits).map(([split, counts]) => [
    split,
    formatCount(counts.episodes),
    formatCount(counts.total.conversations),
    formatCount(counts.total.windows),
    formatCount(counts.total.tokens),
    formatCount(counts.total.supervisedTokens),
    formatCount(counts.truncatedResponses),
    formatCount(counts.skipped.length),
  ]);
  return html`<h3>
      Training data from ${generation} (distill/${generation}/dataset, ${stats.mode}, ${stats.model})
    </h3>
    ${dataTable({
      columns: [
        'split',
        'episodes',
        'conversations',
        'windows',
        'tokens',
        'supervised tokens',
        'truncated responses',
        'items skipped',
      ],
      rows: splitRows,
    })}
    <p class="muted">
      Windows of at most ${formatCount(stats.limits.windowTokens)} tokens; a supervised token is one the model
      wrote itself (labelled), the rest is context.
    </p>
    ${await chart({
      title: `Supervised tokens per task and role, ${generation}`,
      values: values.filter((value) => value.tokens > 0),
      spec: {
        mark: 'bar',
        width: 480,
        encoding: {
          y: { field: 'task', type: 'nominal', title: null },
          x: { field: 'tokens', type: 'quantitative', title: 'supervised tokens', stack: 'zero' },
          color: { field: 'role', type: 'nominal', scale: { domain: [...roles] } },
          row: { field: 'split', type: 'nominal', title: null },
        },
      },
      table: {
        columns: ['split', 'task', 'role', 'windows', 'supervised tokens'],
        rows: values.map((value) => [
          value.split,
          value.task,
          value.role,
          formatCount(value.windows),
          formatCount(value.tokens),
        ]),
      },
    })}`;
}
