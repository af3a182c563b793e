import { describe, expect, it } from 'vitest';

import { Workflow, workflowIssues } from '../../src/workflow/workflow.js';
import { minimalManifest } from '../tasks/toy-task.js';

const valid = () => structuredClone(minimalManifest().workflow) as Workflow;

describe('workflow as data', () => {
  it('accepts a team with an orchestrator, contracts for every subagent and hops between known agents', () => {
    const parsed = Workflow.parse(valid());
    expect(parsed.schemaVersion).toBe(1);
    expect(parsed.agents[2]!.contract!.checks).toEqual([
      { name: 'numbers_match', description: 'Report equals files.' },
    ]);
    expect(workflowIssues(parsed)).toEqual([]);
  });

  it('needs exactly one orchestrator', () => {
    const workflow = valid();
    workflow.agents[0]!.kind = 'subagent';
    expect(workflowIssues(workflow).map((issue) => issue.message)).toContain(
      'a workflow has exactly one agent of kind "orchestrator" (found 0)',
    );
  });

  it('rejects duplicate ids, unknown hop ends, self hops and subagents without a contract or a hop', () => {
    const workflow = valid();
    workflow.agents.push({ id: 'analyst', kind: 'subagent', role: 'Copy.', instruction: 'Copy.' });
    workflow.agents.push({ id: 'loner', kind: 'subagent', role: 'Alone.', instruction: 'Idle.' });
    workflow.hops.push({ from: 'orchestrator', to: 'ghost' }, { from: 'reviewer', to: 'reviewer' });
    const messages = workflowIssues(workflow).map((issue) => issue.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'agent id "analyst" is used twice',
        'subagent "loner" needs an output contract (what it returns to the orchestrator)',
        'hop names unknown agent "ghost"',
        'hop from "reviewer" to itself',
        'subagent "loner" appears in no hop',
      ]),
    );
  });

  it('reports problems at the path of the offending field', () => {
    const workflow = valid();
    workflow.hops[1]!.to = 'nobody';
    const result = Workflow.safeParse(workflow);
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({
      path: ['hops', 1, 'to'],
      message: 'hop names unknown agent "nobody"',
    });
  });

  it('lets object fields in a contract list their nested fields, and only object fields', () => {
    const workflow = valid();
    workflow.agents[1]!.contract!.fields.push({
      name: 'validation_report',
      type: 'object',
      description: 'Checks.',
      fields: [{ name: 'no_future_leakage', type: 'boolean', description: 'No leakage.' }],
    });
    expect(Workflow.safeParse(workflow).success).toBe(true);
    workflow.agents[1]!.contract!.fields.push({
      name: 'empty_object',
      type: 'object',
      description: 'Nothing.',
    });
    expect(Workflow.safeParse(workflow).error!.issues[0]!.message).toBe('an object field lists its fields');
  });
});
