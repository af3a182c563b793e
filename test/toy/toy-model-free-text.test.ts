import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { episodePrompt } from '../../src/episode/prompt.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { proposeWorkflow } from '../../src/optimizer/index.js';
import { loadTask, renderTaskPrompt, type LoadedTask } from '../../src/tasks/index.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel } from '../../src/toy/index.js';
import { readPrompt } from '../../src/toy/workflow-reading.js';
import { renderWorkflow } from '../../src/workflow/render.js';
import {
  DraftWorkflow,
  Workflow,
  type FreeTextWorkflow,
  type TeamDesign,
} from '../../src/workflow/workflow.js';

const taskDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));

const LISTED: FreeTextWorkflow = {
  schemaVersion: 1,
  text: `Create an agent team with following agent candidates to solve this problem:
[
  { "agent_id": "agent_orchestrator", "role": "Lead Research Coordinator", "instruction": "Decompose the work and route it." },
  { "agent_id": "agent_data_curator", "role": "Data Specialist", "instruction": "Clean the data and\\nwrite the results." },
  { "agent_id": "agent_scientific_writer", "role": "Scientific Writer", "instruction": "Write the report." }
]

Write your plan in logs.txt.
`,
};

describe('the toy model on a free-text or draft v0', () => {
  let task: LoadedTask;
  let server: ReplyServer;
  let model: OpenAICompatibleModel;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy', seed: 1 });
    model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  });

  afterAll(async () => {
    await server?.close();
  });

  const propose = (design: TeamDesign) =>
    proposeWorkflow(
      model,
      {
        task: { id: task.manifest.id, prompt: renderTaskPrompt(task) },
        current: { label: 'v0', design },
        original: design,
        history: [],
      },
      { modelName: 'mass-toy', maxChangeFraction: 0.2 },
    );

  it('reads the team the free text lists, after the task, and calls its agents in turn', () => {
    const prompt = episodePrompt({
      task: renderTaskPrompt(task),
      workflow: renderWorkflow(LISTED),
      teacher: true,
    });
    const read = readPrompt(prompt);
    expect(read.task).toBe(renderTaskPrompt(task).trimEnd());
    expect(read.teamText).toBe(LISTED.text.trim());
    expect(read.workflow?.orchestratorId).toBe('agent_orchestrator');
    expect(read.workflow?.agents.map((agent) => agent.id)).toEqual([
      'agent_orchestrator',
      'agent_data_curator',
      'agent_scientific_writer',
    ]);
    expect(read.workflow?.agents[1]!.instruction).toBe('Clean the data and write the results.');
    expect(read.workflow?.hops.map((hop) => `${hop.from}>${hop.to}`)).toEqual([
      'agent_orchestrator>agent_data_curator',
      'agent_data_curator>agent_orchestrator',
      'agent_orchestrator>agent_scientific_writer',
      'agent_scientific_writer>agent_orchestrator',
    ]);
    // The bare task is still read as the bare task, and so is a text that lists no agents.
    expect(readPrompt(episodePrompt({ task: renderTaskPrompt(task) }))).toEqual({
      task: renderTaskPrompt(task).trimEnd(),
    });
    const unlisted = episodePrompt({ task: renderTaskPrompt(task), workflow: 'Work as a team.' });
    expect(readPrompt(unlisted)).toEqual({ task: unlisted.trimEnd() });
  });

  it('the optimizer turns the listed agents into a valid structured design, unbounded by the stabiliser', async () => {
    const outcome = await propose(LISTED);
    expect(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.errors)).toBe(true);
    if (!outcome.ok) return;
    const design = Workflow.parse(outcome.proposal.design);
    expect(design.agents.map((agent) => [agent.id, agent.kind])).toEqual([
      ['agent-orchestrator', 'orchestrator'],
      ['agent-data-curator', 'subagent'],
      ['agent-scientific-writer', 'subagent'],
    ]);
    expect(design.agents[1]!.role).toBe('Data Specialist');
    expect(design.agents[1]!.contract?.checks.map((check) => check.name)).toEqual(['outputs_complete']);
    expect(outcome.proposal.changes[0]).toMatch(
      /^wrote the free-text team in the structured form: the agents the text lists/,
    );
    expect(outcome.maxChangeFraction).toBeNull();
    expect(outcome.changeFraction).toBeGreaterThan(0.2);
  });

  it('a text that lists no agents gets a small default team', async () => {
    const outcome = await propose({
      schemaVersion: 1,
      text: 'Work as a team: split the analysis from the writing.',
    });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.proposal.design.agents.map((agent) => agent.id)).toEqual(['lead', 'analyst', 'reporter']);
  });

  it('a draft gets the contracts and hops it lacks', async () => {
    const draft = structuredClone(Workflow.parse(task.manifest.workflow));
    delete draft.agents[2]!.contract;
    const partial = DraftWorkflow.parse({ ...draft, hops: [] });
    const outcome = await propose(partial);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const design = Workflow.parse(outcome.proposal.design);
    expect(design.agents[1]!.contract).toEqual(draft.agents[1]!.contract);
    expect(design.agents[2]!.contract?.fields.map((field) => field.name)).toEqual([
      'files_written',
      'summary',
    ]);
    expect(design.hops).toHaveLength(4);
    expect(outcome.proposal.changes[0]).toMatch(
      /^completed the draft: a contract for reporter; hops lead → analyst/,
    );
  });
});
