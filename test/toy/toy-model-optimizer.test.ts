import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { episodePrompt } from '../../src/episode/prompt.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { proposeWorkflow, type OptimizerInput } from '../../src/optimizer/index.js';
import { type PairwiseComparison } from '../../src/records/index.js';
import { loadTask, renderTaskPrompt, type LoadedTask } from '../../src/tasks/index.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel, TOY_OUTPUT_MARKER } from '../../src/toy/index.js';
import { readPrompt } from '../../src/toy/workflow-reading.js';
import { renderWorkflow } from '../../src/workflow/render.js';
import { Workflow } from '../../src/workflow/workflow.js';

const taskDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));

describe('the toy optimizer through proposeWorkflow', () => {
  let task: LoadedTask;
  /** The demo task's own design, structured. */
  let v0: Workflow;
  let server: ReplyServer;
  let model: OpenAICompatibleModel;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    v0 = Workflow.parse(task.manifest.workflow);
    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy', seed: 1 });
    model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  });

  afterAll(async () => {
    await server?.close();
  });

  function input(current: Workflow, label: string, history: PairwiseComparison[]): OptimizerInput {
    return {
      task: { id: task.manifest.id, prompt: renderTaskPrompt(task) },
      current: { label, design: current },
      original: v0,
      history,
    };
  }

  it('returns a valid, changed design on the first call, with every member of the reply', async () => {
    const outcome = await proposeWorkflow(model, input(v0, 'v0', []), {
      modelName: 'mass-toy',
    });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.attempts).toHaveLength(1);
    expect(Workflow.parse(outcome.proposal.design)).toEqual(outcome.proposal.design);
    expect(outcome.proposal.design).not.toEqual(v0);
    expect(outcome.proposal.changes).toHaveLength(1);
    expect(outcome.proposal.why).toContain(TOY_OUTPUT_MARKER);
    expect(outcome.changeFraction).toBeGreaterThan(0);
    expect(outcome.changeFraction).toBeLessThanOrEqual(0.25);
  });

  it('keeps improving over iterations: more checks, more fields, a conditional return hop the toy team can read', async () => {
    let current = v0;
    const history: PairwiseComparison[] = [];
    const changes: string[] = [];
    for (let version = 1; version <= 6; version++) {
      const outcome = await proposeWorkflow(model, input(current, `v${version - 1}`, history), {
        modelName: 'mass-toy',
        maxChangeFraction: 0.3,
      });
      expect(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.errors)).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.attempts).toHaveLength(1);
      history.push({
        candidate: { label: `v${version}`, design: outcome.proposal.design },
        opponent: { label: `v${version - 1}`, design: current },
        winner: 'candidate',
        rationale: `Workspace A reports more validation checks than B. ${TOY_OUTPUT_MARKER}`,
      });
      changes.push(...outcome.proposal.changes);
      current = outcome.proposal.design;
    }
    expect(changes.some((change) => /new check/.test(change))).toBe(true);
    expect(changes.some((change) => /new hop reporter → analyst, only if/.test(change))).toBe(true);
    expect(changes.some((change) => /new contract field/.test(change))).toBe(true);
    const checks = current.agents.flatMap((agent) => agent.contract?.checks ?? []);
    expect(checks.length).toBeGreaterThan(v0.agents.flatMap((agent) => agent.contract?.checks ?? []).length);

    // What the orchestrator will read: the rendered design in an episode prompt.
    const prompt = episodePrompt({
      task: renderTaskPrompt(task),
      workflow: renderWorkflow(current),
      teacher: true,
    });
    const read = readPrompt(prompt);
    expect(read.task).toBe(renderTaskPrompt(task).trimEnd());
    expect(read.workflow?.orchestratorId).toBe('lead');
    expect(read.workflow?.hops).toEqual(current.hops);
    for (const agent of current.agents) {
      const seen = read.workflow!.agents.find((candidate) => candidate.id === agent.id)!;
      expect(seen.role).toBe(agent.role);
      expect(seen.instruction).toBe(agent.instruction);
      expect(seen.checks.map((check) => check.name)).toEqual(
        agent.contract?.checks.map((check) => check.name) ?? [],
      );
      expect(seen.fields.map((field) => field.name)).toEqual(
        agent.contract?.fields.map((field) => field.name) ?? [],
      );
    }
  });

  it('grounds its change in the judge’s first point against the latest candidate, else in the rationale', async () => {
    const lost: PairwiseComparison = {
      candidate: { label: 'v1', design: v0 },
      opponent: { label: 'reference', design: null },
      winner: 'opponent',
      rationale: `Workspace A: 2 of 2 deliverables pass the preflight. Workspace B wins, 22 points to 20. ${TOY_OUTPUT_MARKER}`,
      candidatePosition: 'A',
      pointsAgainstCandidate: [
        'Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.',
      ],
      pointsAgainstOpponent: [],
    };
    const pointed = await proposeWorkflow(model, input(v0, 'v1', [lost]), { modelName: 'mass-toy' });
    expect(pointed.ok && pointed.proposal.evidenceUsed).toEqual([
      'Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.',
    ]);
    expect(pointed.ok && pointed.proposal.changes).toHaveLength(1);

    // Nothing listed against the candidate (only against its opponent): the rationale's first sentence.
    const won: PairwiseComparison = {
      ...lost,
      winner: 'candidate',
      pointsAgainstCandidate: [],
      pointsAgainstOpponent: ['Workspace B: the preflight finds `results.json` incomplete.'],
    };
    const fallback = await proposeWorkflow(model, input(v0, 'v1', [won]), { modelName: 'mass-toy' });
    expect(fallback.ok && fallback.proposal.evidenceUsed).toEqual([
      'Workspace A: 2 of 2 deliverables pass the preflight.',
    ]);
  });
});
