import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { REPLY_FORMAT } from '../../src/optimizer/optimizer-instructions.js';
import { parseWorkflow } from '../../src/workflow/parse-workflow.js';
import type { Workflow } from '../../src/workflow/workflow.js';
import { smallTeam } from './support.js';

function asJson(workflow: Workflow): string {
  const { schemaVersion: _schemaVersion, ...body } = workflow;
  return JSON.stringify(body, null, 2);
}

function expectWorkflow(result: ReturnType<typeof parseWorkflow>): Workflow {
  if (!result.ok) throw new Error(`expected a workflow, got: ${result.errors.join('; ')}`);
  return result.workflow;
}

describe('parseWorkflow: finding the design in what was written', () => {
  it('reads JSON in a Markdown fence, with prose before and after', () => {
    const text = `Here is the improved design.\n\n\`\`\`json\n${asJson(smallTeam())}\n\`\`\`\n\nIt adds nothing else.`;
    expect(expectWorkflow(parseWorkflow(text, 'reply'))).toEqual(smallTeam());
  });

  it('reads YAML, bare or fenced', () => {
    const yaml = stringify({ agents: smallTeam().agents, hops: smallTeam().hops });
    expect(expectWorkflow(parseWorkflow(yaml, 'workflow.yaml'))).toEqual(smallTeam());
    expect(expectWorkflow(parseWorkflow(`Design:\n\n\`\`\`yaml\n${yaml}\`\`\`\n`, 'reply'))).toEqual(
      smallTeam(),
    );
  });

  it('reads JSON embedded in prose without a fence, even with a brace in a string and a trailing comma', () => {
    const team = smallTeam();
    team.agents[0]!.instruction = 'Plan {carefully} and delegate.';
    const json = asJson(team).replace(/\n(\s*)\]\n\}$/, ',\n$1]\n}');
    expect(json).toMatch(/,\n\s*\]\n\}$/);
    const text = `I considered {a few options}. The new design is ${json} and I expect it to win.`;
    expect(expectWorkflow(parseWorkflow(text, 'reply'))).toEqual(team);
  });

  it('ignores a think block and unwraps a design under "design" or "workflow"', () => {
    const text = `<think>maybe {"agents": []}</think>\n${JSON.stringify({ workflow: JSON.parse(asJson(smallTeam())) })}`;
    expect(expectWorkflow(parseWorkflow(text, 'reply'))).toEqual(smallTeam());
    expect(expectWorkflow(parseWorkflow({ design: JSON.parse(asJson(smallTeam())) }, 'reply'))).toEqual(
      smallTeam(),
    );
  });

  it('prefers the object that validates when the text holds several', () => {
    const text = `An agent looks like {"id": "x"}. The design: ${asJson(smallTeam())}`;
    expect(expectWorkflow(parseWorkflow(text, 'reply'))).toEqual(smallTeam());
  });

  it('says so when there is no object at all, and keeps the raw text', () => {
    const result = parseWorkflow('I would add a data auditor and a second reviewer.', 'reply');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^reply: no JSON or YAML object found/);
    expect(result.raw).toBe('I would add a data auditor and a second reviewer.');
  });
});

describe('parseWorkflow: invalid designs are refused with errors that say what to fix', () => {
  function errorsOf(mutate: (workflow: Workflow) => void): string[] {
    const workflow = smallTeam();
    mutate(workflow);
    const result = parseWorkflow(asJson(workflow), 'design');
    expect(result.ok).toBe(false);
    return result.ok ? [] : result.errors;
  }

  it('no orchestrator', () => {
    expect(errorsOf((workflow) => (workflow.agents[0]!.kind = 'subagent'))).toContain(
      'design: agents: a workflow has exactly one agent of kind "orchestrator" (found 0)',
    );
  });

  it('duplicate ids', () => {
    expect(errorsOf((workflow) => (workflow.agents[2]!.id = 'analyst'))).toContain(
      'design: agents[2].id: agent id "analyst" is used twice',
    );
  });

  it('a hop to an unknown agent', () => {
    expect(errorsOf((workflow) => (workflow.hops[2]!.to = 'auditor'))).toContain(
      'design: hops[2].to: hop names unknown agent "auditor"',
    );
  });

  it('a subagent without a contract', () => {
    expect(errorsOf((workflow) => delete workflow.agents[1]!.contract)).toEqual([
      'design: agents[1].contract: subagent "analyst" needs an output contract (what it returns to the orchestrator)',
    ]);
  });

  it('field-level mistakes and structural ones together, each with its path', () => {
    const errors = errorsOf((workflow) => {
      Object.assign(workflow.agents[1]!.contract!.fields[0]!, { type: 'float' });
      Object.assign(workflow.agents[2]!, { notes: 'extra' });
      workflow.hops.push({ from: 'orchestrator', to: 'ghost' });
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^design: agents\[1\]\.contract\.fields\[0\]\.type: Invalid option/),
        'design: agents[2]: Unrecognized key: "notes"',
        'design: hops[4].to: hop names unknown agent "ghost"',
      ]),
    );
  });

  it('a value that is not a workflow at all', () => {
    const result = parseWorkflow({ team: ['orchestrator'] }, 'design');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual(
      expect.arrayContaining([
        'design: agents: Invalid input: expected array, received undefined',
        'design: Unrecognized key: "team"',
      ]),
    );
    expect(JSON.parse(result.raw)).toEqual({ team: ['orchestrator'] });
  });
});

describe('parseWorkflow: the text rules the optimizer is told', () => {
  it('refuses an empty or blank description, role or condition, naming the field, as REPLY_FORMAT says', () => {
    const team = JSON.parse(JSON.stringify(smallTeam())) as Workflow;
    team.agents[1]!.contract!.fields[0]!.description = '   ';
    team.agents[1]!.contract!.checks[0]!.description = '';
    team.agents[2]!.role = ' ';
    team.hops[0] = { ...team.hops[0]!, condition: '' };
    const result = parseWorkflow(team, 'design');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual(
      expect.arrayContaining([
        'design: agents[1].contract.fields[0].description: the description is empty: write it as non-empty text',
        'design: agents[1].contract.checks[0].description: the description is empty: write it as non-empty text',
        'design: agents[2].role: the role is empty: write it as non-empty text',
        expect.stringMatching(
          /^design: hops\[0\]\.condition: the condition \(leave it out for an unconditional hop\) is empty/,
        ),
      ]),
    );
    // Each of these rules is in the reply format the optimizer is given.
    expect(REPLY_FORMAT).toContain(`Every field's and every check's "description" is non-empty text`);
    expect(REPLY_FORMAT).toContain('a "condition", when given, is non-empty text');
    expect(REPLY_FORMAT).toContain('Role and instruction are non-empty text');
  });
});
