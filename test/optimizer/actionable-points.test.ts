import { describe, expect, it } from 'vitest';

import { actionableSentences } from '../../src/optimizer/actionable-sentences.js';
import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { recurringProblems } from '../../src/optimizer/recurring-problems.js';
import { smallTeam } from '../workflow/support.js';
import { designWithCritic, optimizerInput } from './support.js';
import {
  DOSE_RESPONSE_VERDICT,
  MIN_VARIANCE_VERDICT,
  PID_TUNING_VERDICT,
  SIGNAL_TIMING_VERDICT,
} from './verdicts.js';

describe('the actionable points of a verdict that praises and criticises both workspaces', () => {
  it('are the candidate’s failures, not the praise of the opponent (finance-min-variance, candidate B)', () => {
    expect(actionableSentences(MIN_VARIANCE_VERDICT, { candidate: 'B' })).toEqual([
      'B flags no stale assets: its `stale_assets` is an empty list, yet A07 and A23 each carry the maximum weight of 0.20 in `results/weights.json`.',
      'B claims a predicted annual volatility of 6.1 % that its own numbers contradict: `results/ablation.json` gives 6.1 % only for the in-sample optimum of the sample covariance and 9.8 % for the out-of-sample check.',
      "The figures in B's report come from an earlier run;",
      "B's `run.py`, as it stands, would not reproduce them.",
    ]);
    // The winner, A, is criticised for nothing.
    expect(actionableSentences(MIN_VARIANCE_VERDICT, { candidate: 'A' })).toEqual([]);
    // Not knowing the candidate, every criticism is kept, and still not the praise "without stale assets".
    const either = actionableSentences(MIN_VARIANCE_VERDICT);
    expect(either).toHaveLength(4);
    expect(either.join(' ')).not.toContain('without stale assets');
  });

  it('follow "the first workspace", "its" and "only B" to the candidate (finance-signal-timing, candidate A)', () => {
    expect(actionableSentences(SIGNAL_TIMING_VERDICT, { candidate: 'A' })).toEqual([
      "Workspace A trades flow_imbalance_5d, a centred five-day average that includes the next two days' flows, and its holdout net Sharpe of 2.9 comes from that look-ahead.",
      'A never tests whether the feature-return relation is stable and fits one set of weights to the whole sample.',
      'The first workspace also reports the same number for gross and net Sharpe (1.84), so the 5 bp costs were not applied.',
      'Only B compares several smoothing half-lives.',
    ]);
    expect(actionableSentences(SIGNAL_TIMING_VERDICT, { candidate: 'B' })).toEqual([]);
  });

  it('read a bulleted verdict from either side (robotics-pid-tuning)', () => {
    expect(actionableSentences(PID_TUNING_VERDICT, { candidate: 'B' })).toEqual([
      'B tunes on all 40 scenarios and reaches a pass rate of 0.95 in the unmodified simulator, though its report does not say which two scenarios fail or why.',
      "B's step-response plot has no axis labels.",
    ]);
    expect(actionableSentences(PID_TUNING_VERDICT, { candidate: 'A' })).toEqual([
      "Workspace A edited the protected `sim/servo.py` (the integrity check reports it MODIFIED, with the overshoot limit raised to 80 %), so its pass rate of 1.0 was not obtained in the task's simulator.",
      'Unlike A, B includes an ablation of the anti-windup and the integral term.',
    ]);
  });

  it('keep what is said of both, and turn with "but it" (pharmacy-dose-response, "Candidate A/B")', () => {
    const neither =
      'Neither workspace reports how the EC50 intervals change when the excluded wells are put back.';
    expect(actionableSentences(DOSE_RESPONSE_VERDICT, { candidate: 'A' })).toEqual([
      'Candidate A excludes those wells and says so in the Data section, but it ignores the two failed dispenses on plate 3, which inflate the spread of its C2 triplicates.',
      neither,
    ]);
    expect(actionableSentences(DOSE_RESPONSE_VERDICT, { candidate: 'B' })).toEqual([
      'Candidate B fits all ten concentrations of C3 and C6, including the wells above their solubility limit where the compound precipitates, so its Emax for both is too low and its potency order puts C6 second instead of last.',
      neither,
    ]);
  });

  it('tell the article "A" from workspace A', () => {
    const sentence = 'A careful look at the plots shows that B lacks axis labels.';
    expect(actionableSentences(sentence, { candidate: 'A' })).toEqual([]);
    expect(actionableSentences(sentence, { candidate: 'B' })).toEqual([sentence]);
    expect(actionableSentences("A's plots lack axis labels.", { candidate: 'A' })).toHaveLength(1);
  });

  it('are shown in the optimizer prompt for the candidate, and only its missing files reach the checklist', () => {
    const comparison = (label: string, position: 'A' | 'B') => ({
      candidate: { label, design: designWithCritic() },
      opponent: { label: 'v0', design: smallTeam() },
      winner: 'opponent' as const,
      rationale: MIN_VARIANCE_VERDICT.replace(
        'B flags no stale',
        'B has no results/ablation.json and flags no stale',
      ),
      candidatePosition: position,
    });
    const { user } = buildOptimizerPrompt(optimizerInput({ history: [comparison('v1', 'B')] }));
    const points = user
      .split('Points against v1 (workspace B), found in the rationale (the verdict listed none):\n')[1]!
      .split('\n\n')[0]!;
    expect(points.split('\n')).toHaveLength(4);
    expect(points).toContain('- B has no results/ablation.json and flags no stale assets');
    expect(points).not.toContain('without stale assets');

    // The opponent's missing ablation, twice, is no recurring problem of the candidates.
    const asWinner = [comparison('v1', 'A'), comparison('v2', 'A')].map((entry) => ({
      ...entry,
      winner: 'candidate' as const,
    }));
    expect(recurringProblems(asWinner).filter((problem) => problem.kind === 'missing-deliverable')).toEqual(
      [],
    );
    expect(
      recurringProblems([comparison('v1', 'B'), comparison('v2', 'B')]).map((problem) => problem.kind),
    ).toContain('missing-deliverable');
  });
});

describe('a judgment of both orders', () => {
  /** The same verdict with the workspaces' names exchanged, as the judge writes it when shown the other order. */
  const swapped = (text: string) => text.replace(/\b([AB])\b/g, (side) => (side === 'A' ? 'B' : 'A'));

  it('is read order by order, each with the candidate’s position in it', () => {
    const { user } = buildOptimizerPrompt(
      optimizerInput({
        history: [
          {
            candidate: { label: 'v1', design: designWithCritic() },
            opponent: { label: 'v0', design: smallTeam() },
            winner: 'candidate',
            rationale: `Order 1: ${PID_TUNING_VERDICT}\nOrder 2: ${swapped(PID_TUNING_VERDICT)}`,
            orders: [
              { candidatePosition: 'B', rationale: PID_TUNING_VERDICT },
              { candidatePosition: 'A', rationale: swapped(PID_TUNING_VERDICT) },
            ],
          },
        ],
      }),
    );
    expect(user).toContain(
      'Rationale, order 1 of 2 (in it, workspace B is v1, workspace A is v0):\n\n> Workspace B is preferred.',
    );
    expect(user).toContain(
      'Rationale, order 2 of 2 (in it, workspace A is v1, workspace B is v0):\n\n> Workspace A is preferred.',
    );
    const points = user
      .split('Points against v1 (both orders), found in the rationale (the verdict listed none):\n')[1]!
      .split('\n\n')[0]!;
    expect(points.split('\n')).toEqual([
      '- B tunes on all 40 scenarios and reaches a pass rate of 0.95 in the unmodified simulator, though its report does not say which two scenarios fail or why.',
      "- B's step-response plot has no axis labels.",
      '- A tunes on all 40 scenarios and reaches a pass rate of 0.95 in the unmodified simulator, though its report does not say which two scenarios fail or why.',
      "- A's step-response plot has no axis labels.",
    ]);
    expect(points).not.toContain('edited the protected');
  });
});
