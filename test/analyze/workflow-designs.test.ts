import { afterAll, describe, expect, it } from 'vitest';

import { designSeries } from '../../src/analyze/design-series.js';
import { readGenerationDesigns } from '../../src/analyze/search-designs.js';
import { agentHopsText, contractText, designComponents } from '../../src/workflow/workflow-components.js';
import { Workflow } from '../../src/workflow/workflow.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { topicDesign, writeSearches } from './search-fixture.js';

describe('the components of a design', () => {
  it('are each agent’s role, instruction, contract and hops, as text', () => {
    const design = Workflow.parse(topicDesign('potency'));
    const texts = designComponents(design);
    expect(texts.map((text) => `${text.agent}:${text.component}`)).toEqual([
      'lead:role',
      'lead:instruction',
      'lead:hops',
      'analyst:role',
      'analyst:instruction',
      'analyst:contract',
      'analyst:hops',
      'writer:role',
      'writer:instruction',
      'writer:contract',
      'writer:hops',
    ]);
    expect(contractText(design.agents[1]!.contract!)).toBe(
      [
        'summary (object): What the potency analysis found.',
        '  summary.estimate (number): The potency estimate.',
        'check finite: Every number is finite.',
      ].join('\n'),
    );
    expect(agentHopsText('analyst', design.hops)).toBe(
      'lead -> analyst\nanalyst -> lead when the checks fail',
    );
    expect(agentHopsText('writer', design.hops)).toBe('lead -> writer');
  });

  it('of a draft leave out the contracts and hops it does not give yet', () => {
    const draft = { ...topicDesign('potency'), hops: [] };
    const texts = designComponents({
      ...draft,
      agents: draft.agents.map(({ contract: _contract, ...agent }) => agent),
    });
    expect(new Set(texts.map((text) => text.component))).toEqual(new Set(['role', 'instruction']));
  });
});

describe('the designs of a generation’s searches', () => {
  const directory = temporaryDirectory('mass-analyze-designs-');
  afterAll(() => directory.remove());

  it('are read with each task’s description, and make first, final, champion and per-iteration series', async () => {
    await writeSearches(directory.path, 'L0', [
      {
        task: 'alpha',
        description: 'Alpha task.',
        designs: [
          ['v0', { schemaVersion: 1, text: 'A lead and two helpers, as free text.' }],
          ['v1', topicDesign('alpha')],
          ['v2', null],
          ['v3', topicDesign('alpha', ' Check twice.')],
        ],
        champion: 'v1',
      },
      {
        task: 'beta',
        description: 'Beta task.',
        designs: [
          ['v0', topicDesign('beta')],
          ['v1', topicDesign('beta', ' Be brief.')],
        ],
        champion: 'reference',
      },
    ]);
    const read = await readGenerationDesigns(directory.path, 'L0');
    expect(
      read.tasks.map((task) => [task.task, task.description, task.designs.map((entry) => entry.version)]),
    ).toEqual([
      ['alpha', 'Alpha task.', ['v0', 'v1', 'v3']],
      ['beta', 'Beta task.', ['v0', 'v1']],
    ]);
    const plan = designSeries(read.tasks);
    expect(plan.notes).toEqual(['alpha v0 is free text, which has no components: left out']);
    const versions = Object.fromEntries(
      plan.series.map((series) => [
        series.label,
        series.versions.map((entry) => `${entry.task}:${entry.version}`),
      ]),
    );
    expect(versions).toEqual({
      first: ['0:v1', '1:v0'],
      final: ['0:v3', '1:v1'],
      champion: ['0:v1'],
      v0: ['1:v0'],
      v1: ['0:v1', '1:v1'],
      v3: ['0:v3'],
    });
    const final = plan.series.find((series) => series.label === 'final')!;
    expect(final.items.filter((item) => item.agent === 'alpha/v3/lead').map((item) => item.text)).toEqual([
      'Lead of the alpha study.',
      'Plan the alpha work and delegate it. Check twice.',
      'lead -> analyst\nanalyst -> lead when the checks fail\nlead -> writer',
    ]);
  });

  it('are refused for a generation without searches, naming those there are', async () => {
    await expect(readGenerationDesigns(directory.path, 'L1')).rejects.toThrow('give --generation L0');
  });
});
