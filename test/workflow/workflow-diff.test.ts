import { describe, expect, it } from 'vitest';

import {
  diffWorkflows,
  renderWorkflowDiff,
  workflowChangeSize,
  type WorkflowChange,
} from '../../src/workflow/workflow-diff.js';
import { renderWordDiff, wordEditRatio, wordEdits } from '../../src/workflow/word-diff.js';
import { Workflow } from '../../src/workflow/workflow.js';
import { researchWorkflow, smallTeam } from './support.js';

function types(changes: WorkflowChange[]): string[] {
  return changes.map((change) => change.type);
}

describe('diff of two real task workflows', () => {
  it('lists the agents, contracts and hops that differ between the GARCH and minimum-variance teams', async () => {
    const garch = await researchWorkflow('finance-garch-volatility');
    const minVariance = await researchWorkflow('finance-min-variance');
    const diff = diffWorkflows(garch, minVariance);

    expect(diff.identical).toBe(false);
    const removed = diff.changes.flatMap((change) =>
      change.type === 'agent-removed' ? [change.agent.id] : [],
    );
    const added = diff.changes.flatMap((change) => (change.type === 'agent-added' ? [change.agent.id] : []));
    const garchIds = garch.agents.map((agent) => agent.id);
    const minVarianceIds = minVariance.agents.map((agent) => agent.id);
    expect(removed).toEqual(garchIds.filter((id) => !minVarianceIds.includes(id)));
    expect(added).toEqual(minVarianceIds.filter((id) => !garchIds.includes(id)));
    expect(removed).toEqual(['data-quality', 'volatility-modeller']);

    // The shared reviewer keeps its id; its contract changes field by field.
    expect(diff.changes).toContainEqual(
      expect.objectContaining({
        type: 'field-removed',
        agentId: 'reviewer',
        field: expect.objectContaining({ name: 'mismatches' }),
      }),
    );
    expect(diff.changes).toContainEqual(
      expect.objectContaining({
        type: 'field-changed',
        agentId: 'reviewer',
        before: expect.objectContaining({ name: 'approved' }),
      }),
    );
    // orchestrator → reviewer is step 5 in both: not reported.
    expect(diff.changes.some((change) => 'hop' in change && change.hop.to === 'reviewer')).toBe(false);

    const text = renderWorkflowDiff(diff);
    expect(text).toContain('- agent volatility-modeller (subagent)');
    expect(text).toContain('+ agent portfolio-optimiser (subagent)');
    expect(text).toContain('- hop orchestrator → volatility-modeller (was step 3)');
    expect(text).toContain(
      '+ hop orchestrator → portfolio-optimiser if the reviewer rejected a file the optimiser wrote (step 7)',
    );
    expect(text).toMatch(/\(\d+% of the design changed: [\d.]+ of \d+ units\)$/);
    expect(diff.size.fraction).toBeGreaterThan(0.7);
    expect(diff.size.fraction).toBeLessThan(1);
  });

  it('finds no change between a workflow and itself, and every suite workflow is unchanged by a round trip through JSON', async () => {
    const garch = await researchWorkflow('finance-garch-volatility');
    const diff = diffWorkflows(garch, Workflow.parse(JSON.parse(JSON.stringify(garch))));
    expect(diff).toMatchObject({ identical: true, changes: [], size: { changedUnits: 0, fraction: 0 } });
    expect(renderWorkflowDiff(diff)).toBe('No change: the two designs are the same.');
  });
});

describe('diff of a hand-made change', () => {
  function improved(): Workflow {
    const next = smallTeam();
    const analyst = next.agents[1]!;
    analyst.instruction =
      'Fit the model on data/values.csv, report a 95% interval and write results/metrics.json.';
    analyst.contract!.fields[0]!.type = 'object';
    analyst.contract!.fields[0]!.fields = [
      { name: 'estimate', type: 'number', description: 'Point estimate.' },
      { name: 'interval', type: 'list', description: '95% interval.' },
    ];
    analyst.contract!.fields.splice(1, 1);
    analyst.contract!.checks.push({
      name: 'interval_covers_estimate',
      description: 'The interval contains the estimate.',
    });
    next.agents.splice(2, 0, {
      id: 'critic',
      kind: 'subagent',
      role: 'Critic who refits independently.',
      instruction: 'Refit with a second method and compare.',
      contract: {
        fields: [{ name: 'agrees', type: 'boolean', description: 'Both fits agree.' }],
        checks: [],
      },
    });
    next.hops.splice(
      2,
      0,
      { from: 'orchestrator', to: 'critic' },
      { from: 'critic', to: 'analyst', condition: 'agrees is false' },
    );
    next.hops[5]!.condition = 'approved is false or a check failed';
    return Workflow.parse(next);
  }

  it('records each change as data', () => {
    const diff = diffWorkflows(smallTeam(), improved());
    expect(types(diff.changes)).toEqual([
      'instruction-changed',
      'field-removed',
      'field-changed',
      'check-added',
      'agent-added',
      'hop-changed',
      'hop-added',
      'hop-added',
    ]);
    expect(diff.changes).toContainEqual({
      type: 'hop-changed',
      before: { from: 'reviewer', to: 'analyst', condition: 'approved is false' },
      after: { from: 'reviewer', to: 'analyst', condition: 'approved is false or a check failed' },
      position: 6,
    });
  });

  it('renders one readable line per change, with word-level edits', () => {
    expect(renderWorkflowDiff(diffWorkflows(smallTeam(), improved()))).toBe(
      [
        '~ analyst: instruction Fit the model on [-data/values.csv-] {+data/values.csv, report a 95% interval+} and write results/metrics.json.',
        '- analyst: contract field metrics_file (path): "Where the metrics are."',
        '~ analyst: contract field answer (number): "The fitted value." → answer (object {estimate: number, interval: list}): "The fitted value."',
        '+ analyst: check interval_covers_estimate: The interval contains the estimate.',
        '+ agent critic (subagent): Critic who refits independently. | returns agrees (boolean)',
        '~ hop reviewer → analyst: condition "approved is false" → "approved is false or a check failed"',
        '+ hop orchestrator → critic (step 3)',
        '+ hop critic → analyst if agrees is false (step 4)',
        // 4 agents × (role, instruction) + 5 fields + 3 checks + 6 hops = 21 units; changed: instruction 6/20 words,
        // answer's shape, metrics_file, the new check, critic's 3 units, the condition 4/10 words, 2 new hops.
        '(41% of the design changed: 8.7 of 21 units)',
      ].join('\n'),
    );
  });

  it('reports a hop moved in the call order, and a removed one', () => {
    const next = smallTeam();
    next.hops = [next.hops[2]!, next.hops[0]!, next.hops[1]!];
    const diff = diffWorkflows(smallTeam(), Workflow.parse(next));
    expect(diff.changes).toEqual([
      {
        type: 'hop-removed',
        hop: { from: 'reviewer', to: 'analyst', condition: 'approved is false' },
        position: 4,
      },
      { type: 'hop-moved', hop: { from: 'orchestrator', to: 'reviewer' }, from: 3, to: 1 },
    ]);
  });
});

describe('change size', () => {
  it('is 0 for no change, small for a reworded role, and 1 when nothing is shared', () => {
    const team = smallTeam();
    expect(workflowChangeSize(team, team).fraction).toBe(0);

    const reworded = smallTeam();
    reworded.agents[2]!.role = 'Careful reviewer.';
    const small = workflowChangeSize(team, reworded);
    expect(small.totalUnits).toBe(team.agents.length * 2 + 3 + 2 + team.hops.length);
    expect(small.changedUnits).toBeCloseTo(wordEditRatio('Reviewer.', 'Careful reviewer.'));
    expect(small.fraction).toBeLessThan(0.1);

    const other = Workflow.parse({
      agents: [
        { id: 'lead', kind: 'orchestrator', role: 'Lead.', instruction: 'Delegate.' },
        {
          id: 'worker',
          kind: 'subagent',
          role: 'Worker.',
          instruction: 'Work.',
          contract: { fields: [{ name: 'done', type: 'boolean', description: 'Done.' }] },
        },
      ],
      hops: [{ from: 'lead', to: 'worker' }],
    });
    expect(workflowChangeSize(team, other).fraction).toBe(1);
  });

  it('grows with the amount of change', () => {
    const team = smallTeam();
    const one = smallTeam();
    one.agents[1]!.contract!.checks.push({ name: 'seeded', description: 'Random seeds are fixed.' });
    const two = structuredClone(one);
    two.hops.push({ from: 'orchestrator', to: 'analyst', condition: 'the reviewer found mismatches' });
    expect(workflowChangeSize(team, one).fraction).toBeLessThan(workflowChangeSize(team, two).fraction);
  });
});

describe('word-level edits', () => {
  it('keeps shared words, marks removed and added runs, and measures the share that changed', () => {
    expect(renderWordDiff(wordEdits('fit the model on the data', 'fit two models on the clean data'))).toBe(
      'fit [-the model-] {+two models+} on the {+clean+} data',
    );
    expect(wordEditRatio('a b c', 'a b c')).toBe(0);
    expect(wordEditRatio('a b', 'c d')).toBe(1);
    expect(wordEditRatio('a b c d', 'a b c e')).toBeCloseTo(2 / 8);
  });
});
