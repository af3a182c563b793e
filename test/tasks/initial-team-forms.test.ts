import { afterAll, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { TaskManifest } from '../../src/tasks/manifest.js';
import { designForm, draftGaps } from '../../src/workflow/workflow.js';
import { minimalManifest, removeScratch, writeToyTask } from './toy-task.js';

afterAll(removeScratch);

/** The official repository's form: the lead sentence, a JSON list of agents with underscore ids, closing lines. */
const TEAM_TEXT = `Create an agent team with following agent candidates to solve this problem:
[
  { "agent_id": "agent_orchestrator", "role": "Lead Research Coordinator", "instruction": "Plan and delegate." },
  { "agent_id": "agent_data_curator", "role": "Data Specialist", "instruction": "Clean the data." },
  { "agent_id": "agent_scientific_writer", "role": "Writer", "instruction": "Write the report." }
]

Write your plan and every agent you spawned in logs.txt.
`;

function withWorkflow(workflow: unknown): Record<string, unknown> {
  return { ...minimalManifest(), workflow };
}

/** The minimal manifest's team with its contracts and hops taken out. */
function draftTeam(): Record<string, unknown> {
  const team = structuredClone(minimalManifest().workflow) as {
    agents: Array<Record<string, unknown>>;
    hops: unknown[];
  };
  for (const agent of team.agents) delete agent.contract;
  return { ...team, hops: [] };
}

async function loadError(
  manifest: Record<string, unknown>,
  files: Record<string, string> = {},
): Promise<string> {
  const dir = await writeToyTask(manifest, files);
  try {
    await loadTask(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error('expected loadTask to fail');
}

describe('a task’s v0 team may be free text or a draft', () => {
  it('accepts free text inline and keeps it exactly as written', async () => {
    const task = await loadTask(await writeToyTask(withWorkflow({ text: TEAM_TEXT })));
    expect(task.manifest.workflow).toEqual({ schemaVersion: 1, text: TEAM_TEXT });
    expect(designForm(task.manifest.workflow)).toBe('free-text');
  });

  it('accepts free text in a file of the task folder, read as given', async () => {
    const dir = await writeToyTask(withWorkflow({ text: { file: 'team.md' } }), { 'team.md': TEAM_TEXT });
    const task = await loadTask(dir);
    expect(task.manifest.workflow).toEqual({ schemaVersion: 1, text: TEAM_TEXT });
  });

  it('names a missing or empty team file, and refuses empty text or unknown keys beside it', async () => {
    expect(await loadError(withWorkflow({ text: { file: 'team.md' } }))).toContain(
      'field "workflow.text.file": "team.md" does not exist in the task folder',
    );
    expect(await loadError(withWorkflow({ text: { file: 'team.md' } }), { 'team.md': ' \n' })).toContain(
      'field "workflow.text.file": "team.md" is empty',
    );
    expect(TaskManifest.safeParse(withWorkflow({ text: '  ' })).success).toBe(false);
    expect(TaskManifest.safeParse(withWorkflow({ text: TEAM_TEXT, hops: [] })).success).toBe(false);
    expect(TaskManifest.safeParse(withWorkflow({ text: { file: '../team.md' } })).success).toBe(false);
  });

  it('accepts a structured team whose subagents have no contract and whose hops are empty, and says what it lacks', async () => {
    const task = await loadTask(await writeToyTask(withWorkflow(draftTeam())));
    expect(designForm(task.manifest.workflow)).toBe('draft');
    expect(draftGaps(task.manifest.workflow)).toEqual([
      'no hops: the call order is not given',
      'subagent "analyst" needs an output contract (what it returns to the orchestrator)',
      'subagent "reviewer" needs an output contract (what it returns to the orchestrator)',
    ]);
  });

  it('still checks a draft’s team size and structure: 3 to 6 agents, one orchestrator, hops between known agents', () => {
    const small = draftTeam() as { agents: unknown[]; hops: unknown[] };
    const issues = (workflow: unknown) =>
      TaskManifest.safeParse(withWorkflow(workflow)).error?.issues.map((issue) => issue.message) ?? [];
    expect(issues({ ...small, agents: small.agents.slice(0, 2) })).toContain(
      'an initial workflow has 3 to 6 agents (found 2)',
    );
    expect(issues({ ...small, hops: [{ from: 'orchestrator', to: 'nobody' }] })).toContain(
      'hop names unknown agent "nobody"',
    );
    const twoLeads = structuredClone(small) as { agents: Array<{ kind: string }> };
    twoLeads.agents[1]!.kind = 'orchestrator';
    expect(issues(twoLeads).join('\n')).toMatch(/exactly one agent of kind "orchestrator"/);
  });

  it('keeps the complete structured team as it was: its form is "structured"', async () => {
    const task = await loadTask(await writeToyTask());
    expect(designForm(task.manifest.workflow)).toBe('structured');
    expect(draftGaps(task.manifest.workflow)).toEqual([]);
  });
});
