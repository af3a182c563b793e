import { describe, expect, it } from 'vitest';

import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { parseWorkflow } from '../../src/workflow/parse-workflow.js';
import { smallTeam } from '../workflow/support.js';
import { designWithCritic, history, optimizerInput } from './support.js';

describe('the optimizer prompt', () => {
  it('shows the task, the current design, its run and workspace, the best and original designs', () => {
    const input = optimizerInput({ current: { label: 'v1', design: designWithCritic() } });
    const { system, user } = buildOptimizerPrompt(input);
    expect(system).toMatch(/only lever is the workflow/);
    expect(system).toMatch(/"verification_checks"/);
    expect(user).toContain('Estimate the answer from data/values.csv and report it.');
    expect(user).toContain('# Current design (v1)');
    expect(user).toContain('- status: success');
    expect(user).toContain('- delegations to subagents: 0');
    expect(user).toContain('Missing: results/ablation.json.');
    expect(user).toContain('> v0 finished every deliverable.');
    expect(user).toContain('The original design (v0, below, in “Original design (v0)”) is the best so far.');
    expect(user).toContain('# Original design (v0)');
    expect(user).not.toContain('# How much may change');

    // The design block is JSON the optimizer can copy back: it parses to the same workflow.
    const block = user.split('# Current design (v1)')[1]!.split('# How the current')[0]!;
    const parsed = parseWorkflow(block, 'current design block');
    expect(parsed.ok && parsed.workflow).toEqual(designWithCritic());
  });

  it('carries the history: each winner, rationale, actionable sentences and the diff of the designs compared', () => {
    const comparisons = history();
    comparisons[0]!.candidatePosition = 'A';
    const { user } = buildOptimizerPrompt(optimizerInput({ history: comparisons }));
    expect(user).toContain('## 1. v1 against v0: winner v0 (the opponent)');
    expect(user).toContain('Rationale (in it, workspace A is v1, workspace B is v0):');
    expect(user).toContain('> Workspace B wins on deliverable coverage.');
    expect(user).toContain(
      'Points against v1 (workspace A), found in the rationale (the verdict listed none):\n- Workspace A is missing results/ablation.json and its report lacks a Limitations section.\n- A should have rerun run.py before reporting; its numbers did not match results/metrics.json.',
    );
    expect(user).toContain(
      'Design differences (v0 → v1):\n\n+ agent critic (subagent): Critic who refits independently. | returns agrees (boolean)\n+ hop orchestrator → critic (step 3)\n+ hop critic → analyst if agrees is false (step 4)',
    );
    expect(user).toContain('## 2. v2 against reference: winner reference (the opponent)');
    expect(user).toContain(
      'reference ran the bare task without a workflow, so there is no design to compare.',
    );
    expect(user).toContain('- A must report uncertainty for every headline number.');
    expect(user).toContain(
      'Run of v1:\n- status: failure (timeout: the episode ran past its wall-clock limit and was stopped)',
    );
  });

  it('ends with the checklist of recurring problems', () => {
    const { user } = buildOptimizerPrompt(optimizerInput());
    const checklist = user.split('# Recurring problems')[1]!;
    expect(checklist).toContain(
      '- [ ] "results/ablation.json" was reported missing or incomplete in 2 comparisons (1, 2): make producing and checking it part of a contract.',
    );
    expect(checklist).toContain('- [ ] Runs failed with "timeout" 2 times');
    expect(checklist).toContain('- [ ] The orchestrator delegated nothing in 2 runs');
  });

  it('states the change bound when the stabiliser sets one', () => {
    const { user } = buildOptimizerPrompt(optimizerInput(), { maxChangeFraction: 0.25 });
    expect(user).toContain('# How much may change');
    expect(user).toContain('change at most 25% of the current design');
  });

  it('shows only the most recent comparisons in full, and says how many were left out', () => {
    const { user } = buildOptimizerPrompt(optimizerInput(), { historyLimit: 1 });
    expect(user).toContain(
      '1 earlier comparison is not shown; the checklist of recurring problems (below, in “Recurring problems”) counts it too.',
    );
    expect(user).not.toContain('## 1. v1 against v0');
    expect(user).toContain('## 2. v2 against reference');
    // The checklist still sees both comparisons.
    expect(user).toContain('in 2 comparisons (1, 2)');
  });

  it('says that the bare-task reference is champion, and that v0 lost to it, at v1', () => {
    const lost = history()[1]!;
    const input = optimizerInput({
      current: { label: 'v0', design: smallTeam() },
      previousBest: { label: 'reference', design: null, rationale: '' },
      history: [
        { ...lost, candidate: { label: 'v0', design: smallTeam() } },
        { ...lost, candidate: { label: 'v1', design: designWithCritic() }, winner: 'tie' },
      ],
    });
    const { user } = buildOptimizerPrompt(input);
    const best = user.split('# Best design so far (reference)\n\n')[1]!.split('\n# ')[0]!;
    expect(best).toBe(
      'The best so far is the reference run: the bare task, solved without any workflow. No design has beaten it yet.\n\n' +
        'v0 lost to it (comparison 1) and v1 tied with it (a tie keeps the champion) (comparison 2).\n',
    );
    expect(user).not.toMatch(
      /No design has been judged|The original design \(v0, below, in “Original design \(v0\)”\) is the best/,
    );
    expect(user).toContain('## 1. v0 against reference: winner reference (the opponent)');
  });

  it('says so when there is no history, no best and the current design is the original', () => {
    const { user } = buildOptimizerPrompt(
      optimizerInput({
        current: { label: 'v0', design: smallTeam() },
        previousBest: undefined,
        history: [],
        execution: undefined,
        workspaceEvidence: undefined,
      }),
    );
    expect(user).toContain('No comparisons yet.');
    expect(user).toContain('No design has been judged yet.');
    expect(user).toContain('The current design is the original one.');
    expect(user).toContain('No execution record was given.');
    expect(user).toContain('# Recurring problems\n\nNone so far.');
  });
});
