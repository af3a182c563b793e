import { WORKFLOW_COMPONENTS, type WorkflowComponent } from '../workflow/workflow-components.js';
import type { InformationEstimate, WorkflowInformation } from './workflow-information-record.js';

/** A number of nats as printed: three decimals, a true minus sign. */
export function nats(value: number): string {
  const shown = value.toFixed(3);
  return /^-0\.0+$/.test(shown) ? shown.slice(1) : shown.replace(/^-/, '−');
}

/** `0.123 [−0.050, 0.310]`: the adjusted value and its interval; `n/a` for a skipped estimate. */
export function adjustedCell(estimate: InformationEstimate | undefined): string {
  if (!estimate || estimate.adjusted === null) return 'n/a';
  const interval = estimate.adjustedInterval
    ? ` [${nats(estimate.adjustedInterval[0])}, ${nats(estimate.adjustedInterval[1])}]`
    : '';
  return `${nats(estimate.adjusted)}${interval}`;
}

/** `0.203 − 0.080, p 0.03`: the unadjusted value, its shuffle baseline and the permutation p-value. */
export function unadjustedCell(estimate: InformationEstimate | undefined): string {
  if (!estimate || estimate.mi === null || estimate.baseline === null) return 'n/a';
  return `${nats(estimate.mi)} − ${nats(estimate.baseline)}, p ${estimate.pValue === null ? '?' : estimate.pValue.toFixed(2)}`;
}

/** The pairs of components whose dependence is estimated, in the record's order. */
export function componentPairs(): Array<[WorkflowComponent, WorkflowComponent]> {
  return WORKFLOW_COMPONENTS.flatMap((first, index) =>
    WORKFLOW_COMPONENTS.slice(index + 1).map((second): [WorkflowComponent, WorkflowComponent] => [
      first,
      second,
    ]),
  );
}

/** The sentence that names the embedding and the estimator, printed above every table of their numbers. */
export function methodLines(record: WorkflowInformation): string[] {
  const { estimator } = record;
  const dimensions = WORKFLOW_COMPONENTS.map(
    (component) => `${component} ${estimator.dimensions.components[component] ?? 0}`,
  ).join(', ');
  return [
    `Embedding: ${record.embedding.name}.`,
    `Estimator: ${estimator.name}, in nats (principal components kept: task ${estimator.dimensions.task}, ${dimensions}); ` +
      `adjusted = unadjusted less the mean of ${estimator.permutations} seeded shuffles of the tasks among the designs (seed ${estimator.seed}); ` +
      `intervals: ${Math.round(estimator.confidence * 100)}% percentile bootstrap over tasks (${estimator.bootstrap} resamples, each adjusted by ${estimator.bootstrapPermutations} shuffles of its own).`,
  ];
}

/** The analysis as the terminal prints it: the method, three tables, the limits and what was left out. */
export function formatWorkflowInformation(record: WorkflowInformation): string {
  const skipped = new Set<string>();
  const note = (estimate: InformationEstimate | undefined) => {
    if (estimate?.skipped) skipped.add(estimate.skipped);
    return estimate;
  };
  const designs = (label: string) =>
    String(record.series.find((series) => series.label === label)?.versions.length ?? 0);
  const componentTable = (cell: (estimate: InformationEstimate | undefined) => string) =>
    table(
      ['series', 'designs', ...WORKFLOW_COMPONENTS],
      record.series.map((series) => [
        series.label,
        designs(series.label),
        ...WORKFLOW_COMPONENTS.map((component) =>
          cell(note(series.information.find((entry) => entry.component === component))),
        ),
      ]),
    );
  const pairs = componentPairs();
  const dependence = table(
    ['series', ...pairs.map(([first, second]) => `${first}–${second}`)],
    record.series.map((series) => [
      series.label,
      ...pairs.map(([first, second]) =>
        adjustedCell(
          note(series.dependence.find((entry) => entry.first === first && entry.second === second)),
        ),
      ),
    ]),
  );
  const lines = [
    `Where the designs of generation ${record.generation} carry their task information (the paper's Figure 5): ${record.tasks.length} tasks`,
    ...methodLines(record),
    '',
    'What each component tells about its task: adjusted mutual information [interval]',
    componentTable(adjustedCell),
    '',
    'The same, unadjusted: mutual information − its shuffle baseline, permutation p-value',
    componentTable(unadjustedCell),
    '',
    'How much one component of an agent tells about another of the same agent: adjusted [interval]',
    dependence,
    '',
    'Series: first = each task’s earliest structured design, final = its latest, champion = its champion’s (tasks whose search beat the reference), v<k> = iteration k.',
    ...(skipped.size > 0 ? [`n/a: ${[...skipped].join('; ')}.`] : []),
    'Limits:',
    ...record.limits.map((limit) => `- ${limit}`),
    ...(record.notes.length > 0 ? ['Left out:', ...record.notes.map((entry) => `- ${entry}`)] : []),
  ];
  return lines.join('\n');
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
