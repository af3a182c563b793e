import { describe, expect, it } from 'vitest';

import { RUBRIC, TASK_AND_LENS } from '../../src/judge/judge-prompt.js';
import { judgeCriteria } from '../../src/optimizer/judge-criteria.js';
import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { proposeWorkflow } from '../../src/optimizer/propose-workflow.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import type { ChatModel } from '../../src/model/types.js';
import { smallTeam } from '../workflow/support.js';
import {
  designWithCritic,
  history,
  optimizerInput,
  replyFor,
  smallImprovement,
  nextMatch as match,
} from './support.js';

const criteria = judgeCriteria({
  lens: 'look first for calibrated uncertainty for every estimate',
  focus: 'EC50 intervals that reflect the data, and a fit that keeps every valid well',
});

const section = (user: string, heading: string) => user.split(`\n# ${heading}`)[1]!.split('\n# ')[0]!;

describe('what the optimizer is shown of the judge and of the comparison its design faces', () => {
  it('gives the judge’s criteria as the judge is told them: lens, focus, how they meet the task, the six points', () => {
    const { user } = buildOptimizerPrompt(optimizerInput({ judge: criteria }));
    const shown = section(user, 'What the judge values');
    expect(shown).toContain('Its lens: look first for calibrated uncertainty for every estimate.');
    expect(shown).toContain(
      'In this task, that means above all: EC50 intervals that reflect the data, and a fit that keeps every valid well.',
    );
    expect(shown).toContain(`How the task and its lens combine: ${TASK_AND_LENS}`);
    for (const [index, point] of RUBRIC.entries()) {
      expect(shown).toContain(`${index + 1}. ${point.name}: ${point.question}`);
    }
    // Before the design, right after the task.
    expect(user.indexOf('# What the judge values')).toBeLessThan(user.indexOf('# Current design'));
  });

  it('says whom the next design faces, how it wins, and that a tie keeps the best, under each rule', () => {
    const paper = section(
      buildOptimizerPrompt(optimizerInput({ nextMatch: match() })).user,
      'The next comparison',
    );
    expect(paper).toContain(
      'Your design runs once as v3, and the judge compares its workspace with that of v1, the best design so far, as Workspace A or Workspace B, the order drawn at random.',
    );
    expect(paper).toContain('A tie, a loss or a failed run keeps v1 as the best');

    const official = section(
      buildOptimizerPrompt(
        optimizerInput({
          nextMatch: match({
            opponent: { label: 'reference', bare: true },
            rule: 'official',
            judgeMode: 'both',
          }),
        }),
      ).user,
      'The next comparison',
    );
    expect(official).toContain(
      'with that of the reference run (the bare task, solved by one agent without any workflow), in both orders (as Workspace A, then as Workspace B); when the two verdicts disagree, the comparison is a tie.',
    );
    expect(official).toContain(
      'If v3 wins, it then meets v1, the best design so far, in a second comparison, and becomes the best only by winning that too.',
    );
    expect(official).toContain('must leave a better workspace than reference and v1');

    // While the bare reference is the best, a tie keeps it just the same.
    const bare = section(
      buildOptimizerPrompt(
        optimizerInput({
          nextMatch: match({
            opponent: { label: 'reference', bare: true },
            champion: { label: 'reference', bare: true },
          }),
        }),
      ).user,
      'The next comparison',
    );
    expect(bare).toContain('A tie, a loss or a failed run keeps reference as the best');
  });

  it('shows a bounded excerpt of the workspace the next design faces, unless it is the current design’s', () => {
    const opponentEvidence = {
      label: 'v1',
      text: '### Files\nresults.json  164 B\n(v1 workspace)',
      tokens: 12,
    };
    const { user } = buildOptimizerPrompt(optimizerInput({ nextMatch: match(), opponentEvidence }));
    expect(user).toContain(
      "# Workspace of v1, which the next design is judged against\n\nAn excerpt, prepared as the judge's bundle is, shorter:\n\n### Files\nresults.json  164 B\n(v1 workspace)",
    );
    expect(section(user, 'The next comparison')).toContain(
      '(an excerpt of its workspace: below, in “Workspace of v1”)',
    );

    const itself = buildOptimizerPrompt(
      optimizerInput({
        current: { label: 'v1', design: designWithCritic() },
        nextMatch: match(),
        opponentEvidence,
      }),
    ).user;
    expect(itself).not.toContain('# Workspace of v1, which');
    expect(section(itself, 'The next comparison')).toContain(
      '(its workspace is the current design’s: below, in “Workspace of the current design (v1)”)',
    );
  });

  it('shows each thing once: the best design’s rationale by reference, the current run’s figures in one place', () => {
    const comparisons = history();
    comparisons.push({
      candidate: { label: 'v3', design: designWithCritic() },
      opponent: { label: 'v0', design: smallTeam() },
      winner: 'candidate',
      rationale: 'Workspace A has results/ablation.json and Workspace B does not.',
      candidatePosition: 'A',
      pointsAgainstCandidate: [],
      pointsAgainstOpponent: ['Workspace B has no results/ablation.json.'],
      candidateExecution: comparisons[0]!.candidateExecution,
    });
    const input = optimizerInput({
      current: { label: 'v3', design: designWithCritic() },
      previousBest: {
        label: 'v3',
        design: designWithCritic(),
        rationale: 'Workspace A has results/ablation.json and Workspace B does not.',
      },
      history: comparisons,
    });
    const { user } = buildOptimizerPrompt(input);
    expect(user.split('Workspace A has results/ablation.json and Workspace B does not.')).toHaveLength(2);
    expect(user).toContain(
      "The current design (v3) is the best so far. It won comparison 3; the history (below, in “Comparison history”) gives the judge's reasons.",
    );
    expect(user).toContain('Rationale (in it, workspace A is v3, workspace B is v0):');
    expect(user).not.toContain('Run of v3:');
    expect(user).toContain('Run of v1:');

    // Too old for the history shown, it is quoted with the A/B positions.
    const later = {
      ...input,
      history: [
        ...comparisons,
        {
          candidate: { label: 'v4', design: smallTeam() },
          opponent: { label: 'v3', design: designWithCritic() },
          winner: 'opponent' as const,
          rationale: 'Workspace B keeps its ablation; Workspace A lost it.',
          candidatePosition: 'A' as const,
          pointsAgainstCandidate: ['Workspace A has no results/ablation.json.'],
        },
      ],
    };
    const old = buildOptimizerPrompt(later, { historyLimit: 1 }).user;
    expect(old).not.toContain('## 3.');
    expect(old).toContain(
      "It won comparison 3 (v3 against v0), which is too old for the history (below, in “Comparison history”). The judge's reasons:\n\nRationale (in it, workspace A is v3, workspace B is v0):\n\n> Workspace A has results/ablation.json and Workspace B does not.",
    );
  });

  it('states the rules the reply is checked by, and no team ability the workflow cannot express', () => {
    const { system } = buildOptimizerPrompt(optimizerInput());
    expect(system).not.toMatch(/parallel/i);
    expect(system).toContain('calls its subagents one at a time, in the order of the hops');
    expect(system).toContain('("data-curator", not "data_curator")');
    expect(system).toContain('with at least one field');
    expect(system).toContain(
      'No other keys anywhere in the design (agents, contracts, fields, checks, hops).',
    );
    expect(system).toContain('"evidence_used": ["one per change, in the order of changes');
    expect(system).toContain('The orchestrator needs no contract');
    // One order of priorities.
    expect(system).toContain('How to make a design better, in this order:');
    expect(system).not.toMatch(/before anything else|First, strengthen/);
  });

  it('records in the outcome what the prompt showed', async () => {
    const model: ChatModel = {
      endpoint: 'scripted',
      complete: async () => ({
        id: 'reply-1',
        model: 'optimizer',
        message: { role: 'assistant', content: replyFor(smallImprovement()) },
        finishReason: 'stop',
        usage: null,
      }),
      stream: () => {
        throw new Error('not used');
      },
    };
    const opponentEvidence = { label: 'v1', text: '### Files\n(v1 workspace)', tokens: 9 };
    const outcome = await proposeWorkflow(
      model,
      optimizerInput({ judge: criteria, nextMatch: match(), opponentEvidence }),
      { modelName: 'optimizer' },
    );
    expect(outcome.shown).toEqual({
      criteria,
      nextMatch: match(),
      currentWorkspace: { label: 'v2', shown: true },
      opponentWorkspace: { label: 'v1', tokens: 9, text: '### Files\n(v1 workspace)' },
      comparisons: { total: 2, withJudgePoints: 0 },
    });
    const record = OptimizerCallRecord.parse(
      JSON.parse(OptimizerCallRecord.serialize({ taskId: 't', currentLabel: 'v2', outcome })),
      'test',
    );
    expect(record.outcome.shown?.opponentWorkspace?.label).toBe('v1');
  });
});
