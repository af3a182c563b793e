import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  WorkflowInformationRecord,
  type WorkflowInformation,
} from '../../src/records/workflow-information-record.js';
import { formatWorkflowInformation, nats } from '../../src/records/workflow-information-table.js';
import { readRunForReport, renderReport } from '../../src/report/index.js';
import { workflowInformationSection } from '../../src/report/sections/workflow-information-section.js';
import { workflowInformationPath } from '../../src/store/run-paths.js';
import { temporaryDirectory } from '../support/fixtures.js';

const HOSTILE = '<img src=x onerror=window.__pwned=1>';

const estimate = (adjusted: number | null, skipped: string | null = null) => ({
  samples: 24,
  tasks: 12,
  mi: adjusted === null ? null : adjusted + 0.1,
  baseline: adjusted === null ? null : 0.1,
  adjusted,
  pValue: adjusted === null ? null : adjusted > 0.2 ? 0.005 : 0.4,
  interval: adjusted === null ? null : ([adjusted, adjusted + 0.3] as [number, number]),
  adjustedInterval: adjusted === null ? null : ([adjusted - 0.1, adjusted + 0.2] as [number, number]),
  skipped,
});

function record(): WorkflowInformation {
  const series = (label: string, contract: number) => ({
    label,
    versions: [{ task: `task${HOSTILE}`, version: 'v0' }],
    information: [
      { component: 'role' as const, ...estimate(-0.0001) },
      { component: 'instruction' as const, ...estimate(0.05) },
      { component: 'contract' as const, ...estimate(contract) },
      { component: 'hops' as const, ...estimate(null, '5 samples, fewer than the 8 needed') },
    ],
    dependence: [
      { first: 'role' as const, second: 'instruction' as const, ...estimate(0.4) },
      { first: 'role' as const, second: 'contract' as const, ...estimate(-0.02) },
    ],
  });
  return {
    generation: 'L0',
    tasks: [{ task: `task${HOSTILE}`, versions: ['v0', 'v1'], champion: 'v1' }],
    embedding: {
      kind: 'endpoint',
      name: `embedder${HOSTILE} at http://127.0.0.1:9/v1 (8 dimensions)`,
      model: `embedder${HOSTILE}`,
      endpoint: 'http://127.0.0.1:9/v1',
      dimensions: 8,
    },
    estimator: {
      name: 'Gaussian mutual information after PCA',
      units: 'nats',
      dimensions: { task: 3, components: { role: 3, instruction: 3, contract: 2, hops: 3 } },
      explainedVariance: { task: 0.8, components: { role: 0.5, instruction: 0.5, contract: 0.9, hops: 0.4 } },
      permutations: 200,
      bootstrap: 200,
      bootstrapPermutations: 20,
      confidence: 0.95,
      seed: 0,
    },
    series: [series('first', 0.1), series('final', 0.6), series('v0', 0.1)],
    limits: [`12 tasks: wide intervals ${HOSTILE}`],
    notes: [`task${HOSTILE} v0 is free text, which has no components: left out`],
  };
}

describe('the printed workflow information', () => {
  it('names the embedding and the estimator, and says why an estimate is missing', () => {
    const text = formatWorkflowInformation(record());
    expect(text).toContain(`Embedding: embedder${HOSTILE} at http://127.0.0.1:9/v1 (8 dimensions).`);
    expect(text).toContain('principal components kept: task 3, role 3, instruction 3, contract 2, hops 3');
    expect(text).toContain('less the mean of 200 seeded shuffles of the tasks among the designs (seed 0)');
    // A tiny negative is printed as 0, a true negative with a minus sign; the adjusted value with its interval.
    const final = text.split('\n').find((line) => line.startsWith('final '))!;
    expect(final.split(/\s{2,}/)).toEqual([
      'final',
      '1',
      '0.000 [−0.100, 0.200]',
      '0.050 [−0.050, 0.250]',
      '0.600 [0.500, 0.800]',
      'n/a',
    ]);
    expect(text).toContain('0.700 − 0.100, p 0.01');
    expect(text).toContain('n/a: 5 samples, fewer than the 8 needed.');
    expect(text).toContain(`- 12 tasks: wide intervals ${HOSTILE}`);
    expect(text).toContain('Left out:');
    expect(nats(-1.23456)).toBe('−1.235');
  });
});

describe('the report’s workflow information section', () => {
  const directory = temporaryDirectory('mass-analyze-report-');
  afterAll(() => directory.remove());

  it('says how to make one when no generation was analysed', async () => {
    const markup = (await workflowInformationSection(await readRunForReport(directory.path))).markup;
    expect(markup).toContain('No generation has been analysed yet');
  });

  it('draws first against final with the tables, every text escaped, and the report links to it', async () => {
    const file = join(directory.path, workflowInformationPath('L0'));
    await mkdir(join(file, '..'), { recursive: true });
    await WorkflowInformationRecord.write(file, record());
    const data = await readRunForReport(directory.path);
    expect(data.workflowInformation).toHaveLength(1);
    const markup = (await workflowInformationSection(data)).markup;
    expect(markup).toContain('Task information per component, first design against final (embedder');
    expect(markup).toContain('Dependence between an agent’s components, first design against final');
    expect(markup.match(/<svg/g)).toHaveLength(2);
    // The chart's table: the final contract's estimate, its interval and p.
    expect(markup).toContain(
      '<td>contract</td><td>final</td><td>24</td><td>12</td><td>0.700</td><td>0.100</td><td>0.600</td><td>[0.500, 0.800]</td><td>0.01</td>',
    );
    expect(markup).toContain('5 samples, fewer than the 8 needed');
    expect(markup).not.toContain(HOSTILE);
    expect(markup).toContain('&lt;img src=x onerror=window.__pwned=1&gt;');
    const page = await renderReport(data);
    expect(page).toContain('href="#workflow-information"');
  });
});
