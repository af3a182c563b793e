import { afterEach, describe, expect, it } from 'vitest';

import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { parseOptimizerReply } from '../../src/optimizer/optimizer-reply.js';
import { proposeWorkflow } from '../../src/optimizer/propose-workflow.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { DraftWorkflow, type FreeTextWorkflow, type Workflow } from '../../src/workflow/workflow.js';
import { smallTeam } from '../workflow/support.js';
import { optimizerInput, replyFor } from './support.js';

const TEAM_TEXT =
  'Create an agent team with following agent candidates to solve this problem:\n' +
  '[{"agent_id": "agent_analyst", "role": "Analyst", "instruction": "Fit the model with ```code``` blocks."}]\n\n' +
  'Use uv for all Python workflows.\n';
const freeText: FreeTextWorkflow = { schemaVersion: 1, text: TEAM_TEXT };

function draftTeam(): Workflow {
  const team = smallTeam();
  for (const agent of team.agents) delete agent.contract;
  return DraftWorkflow.parse({ ...team, hops: [] });
}

/** The optimizer's input when v0 is `original` and has just been run (no comparison yet). */
function firstProposal(original: FreeTextWorkflow | Workflow) {
  return optimizerInput({
    current: { label: 'v0', design: original },
    previousBest: { label: 'v0', design: original, rationale: 'v0 beat the reference.' },
    original,
    history: [],
  });
}

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('the optimizer on a free-text or draft v0', () => {
  it('shows free text as given, in a fence longer than its own, and asks for the structured form', () => {
    const { system, user } = buildOptimizerPrompt(firstProposal(freeText), { maxChangeFraction: 0.2 });
    expect(system).toContain('"design": { "agents": [ ... ], "hops": [ ... ] }');
    expect(user).toContain(`# Current design (v0)\n\n\`\`\`\`text\n${TEAM_TEXT.trimEnd()}\n\`\`\`\``);
    expect(user).toContain("This design is free text, as the task's author wrote it");
    expect(user).toContain('Your reply must nevertheless give the design in the structured JSON form');
    expect(user).toContain('Write the current design (v0, free text) in the structured form and improve it.');
    expect(user).toContain('`agent_data_curator` as `agent-data-curator`');
    expect(user).toContain('The current design is the original one.');
    // Restating the design in another form cannot be bounded: no bound is stated.
    expect(user).not.toContain('# How much may change');
  });

  it('names what a draft lacks and asks for the complete design', () => {
    const { user } = buildOptimizerPrompt(firstProposal(draftTeam()));
    expect(user).toContain(
      'This design is not complete yet: no hops: the call order is not given; subagent "analyst" needs an output contract',
    );
    expect(user).toContain(
      'Complete the current design (v0) with the contracts and hops it lacks, and improve it.',
    );
  });

  it('summarises a rewrite from free text in one line where the prompt compares designs', () => {
    const structured = smallTeam();
    const { user } = buildOptimizerPrompt(
      optimizerInput({
        current: { label: 'v1', design: structured },
        previousBest: { label: 'v0', design: freeText, rationale: 'v0 beat the reference.' },
        original: freeText,
        history: [
          {
            candidate: { label: 'v1', design: structured },
            opponent: { label: 'v0', design: freeText },
            winner: 'tie',
            rationale: 'Both are complete.',
          },
        ],
      }),
    );
    expect(user).toMatch(
      /Changes from v0 to the current design:\n\nThe design was rewritten from free text into the structured form: \d+% of the words differ/,
    );
    expect(user).toMatch(/Design differences \(v0 → v1\):\n\nThe design was rewritten from free text/);
    expect(user).toContain(`# Original design (v0)\n\n\`\`\`\`text\n${TEAM_TEXT.trimEnd()}`);
  });

  it('the reply parser still refuses free text and drafts as the proposed design', () => {
    const asText = parseOptimizerReply(
      JSON.stringify({ ...JSON.parse(replyFor(smallTeam())), design: { text: 'a better team' } }),
      freeText,
    );
    expect(asText.ok).toBe(false);
    const asDraft = parseOptimizerReply(replyFor(draftTeam()), freeText);
    expect(asDraft.ok).toBe(false);
    expect(!asDraft.ok && asDraft.errors).toContain(
      'design: agents[1].contract: subagent "analyst" needs an output contract (what it returns to the orchestrator)',
    );
    const structured = parseOptimizerReply(replyFor(smallTeam()), freeText);
    expect(structured.ok && structured.diff.changes.map((change) => change.type)).toEqual([
      'design-rewritten',
    ]);
  });

  it('proposeWorkflow repairs a draft reply, then takes the structured one without the stabiliser’s bound', async () => {
    const server = await startScriptedServer({
      script: [step.text(replyFor(draftTeam())), step.text(replyFor(smallTeam()))],
      strict: 'openai-compatible',
    });
    servers.push(server);
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
    const outcome = await proposeWorkflow(model, firstProposal(freeText), {
      modelName: 'scripted-model',
      maxChangeFraction: 0.1,
    });
    server.assertDone();
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.attempts.map((attempt) => attempt.purpose)).toEqual(['initial', 'repair']);
    expect(outcome.maxChangeFraction).toBeNull();
    expect(outcome.proposal.design).toEqual(smallTeam());
    expect(outcome.changeFraction).toBeGreaterThan(0.1);
    expect(outcome.diffText).toContain('~ rewritten from free text into the structured form');
  });
});
