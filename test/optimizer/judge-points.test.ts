import { describe, expect, it } from 'vitest';

import { parseVerdict } from '../../src/records/verdict.js';
import { actionableSentences } from '../../src/optimizer/actionable-sentences.js';
import { comparisonPoints, verdictPoints } from '../../src/optimizer/comparison-points.js';
import type { PairwiseComparison } from '../../src/records/optimizer-history.js';
import { buildOptimizerPrompt } from '../../src/optimizer/optimizer-prompt.js';
import { recurringProblems } from '../../src/optimizer/recurring-problems.js';
import { smallTeam } from '../workflow/support.js';
import { designWithCritic, optimizerInput } from './support.js';
import { LISTED_VERDICTS } from './verdicts.js';

type Case = keyof typeof LISTED_VERDICTS;

/** A comparison as the search records it: the judge's reply parsed, then read with the candidate's position. */
function comparisonFrom(name: Case, candidatePosition: 'A' | 'B'): PairwiseComparison {
  const reply = `I compared the two bundles.\n${JSON.stringify(LISTED_VERDICTS[name])}`;
  const parsed = parseVerdict(reply);
  if (!parsed.ok) throw new Error(parsed.error);
  const verdict = parsed.value;
  const winner =
    verdict.winner === 'tie' ? 'tie' : verdict.winner === candidatePosition ? 'candidate' : 'opponent';
  return {
    candidate: { label: 'v1', design: designWithCritic() },
    opponent: { label: 'v0', design: smallTeam() },
    winner,
    rationale: verdict.rationale,
    candidatePosition,
    ...verdictPoints(verdict, candidatePosition),
  };
}

const pointsFor = (name: Case, position: 'A' | 'B') => comparisonPoints(comparisonFrom(name, position));

describe('the points against the candidate, from the judge’s lists', () => {
  it('give the loser the interval it lacks, which the cue words dropped, and nothing to the winner', () => {
    const { rationale, against_A } = LISTED_VERDICTS.interval;
    // The cue words read "Workspace B reports …, while Workspace A gives none" as a sentence about B.
    expect(actionableSentences(rationale, { candidate: 'A' })).toEqual([]);
    expect(pointsFor('interval', 'A')).toEqual({ points: [...against_A], source: 'judge' });
    expect(pointsFor('interval', 'B')).toEqual({ points: [], source: 'judge' });
  });

  it('do not turn praise of the winner into something for it to fix', () => {
    const { rationale, against_A } = LISTED_VERDICTS.praise;
    // "excludes no wells" reads as an absence by cue words.
    expect(actionableSentences(rationale, { candidate: 'B' })).toContain(
      "B's fit excludes no wells and is well documented: its Method section lists all 24 wells and the weighting it used.",
    );
    expect(pointsFor('praise', 'B').points).toEqual([]);
    expect(pointsFor('praise', 'A').points).toEqual([...against_A]);
  });

  it('keep nothing from a tie that holds nothing against either side', () => {
    expect(actionableSentences(LISTED_VERDICTS.tie.rationale, { candidate: 'A' })).toHaveLength(1);
    expect(pointsFor('tie', 'A')).toEqual({ points: [], source: 'judge' });
    expect(pointsFor('tie', 'B')).toEqual({ points: [], source: 'judge' });
  });

  it('show the loser the difference that decided the match', () => {
    expect(pointsFor('decisive', 'A').points).toEqual([
      'Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.',
    ]);
    expect(pointsFor('decisive', 'B').points).toEqual([]);
    // Read as the opponent's: what the winner could still hold against the loser.
    expect(comparisonPoints(comparisonFrom('decisive', 'B'), 'opponent').points).toEqual([
      'Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.',
    ]);
  });

  it('are read order by order in a judgment of both orders, once each', () => {
    const first = comparisonFrom('interval', 'A');
    const second = comparisonFrom('interval', 'A');
    const comparison: PairwiseComparison = {
      ...first,
      candidatePosition: undefined,
      pointsAgainstCandidate: undefined,
      pointsAgainstOpponent: undefined,
      orders: [
        {
          candidatePosition: 'A',
          rationale: first.rationale,
          pointsAgainstCandidate: first.pointsAgainstCandidate,
          pointsAgainstOpponent: first.pointsAgainstOpponent,
        },
        // The same finding in the other order, listed against the candidate again: shown once.
        {
          candidatePosition: 'B',
          rationale: second.rationale,
          pointsAgainstCandidate: [...LISTED_VERDICTS.interval.against_A],
          pointsAgainstOpponent: [],
        },
      ],
    };
    expect(comparisonPoints(comparison)).toEqual({
      points: [...LISTED_VERDICTS.interval.against_A],
      source: 'judge',
    });
  });

  it('fall back to the cue words for a verdict without lists, and say so in the prompt', () => {
    const old = parseVerdict(JSON.stringify({ winner: 'B', rationale: LISTED_VERDICTS.praise.rationale }));
    expect(old.ok && old.value.against_A).toBeUndefined();
    const comparison = { ...comparisonFrom('praise', 'A'), pointsAgainstCandidate: undefined };
    expect(comparisonPoints(comparison)).toEqual({
      points: [
        'Workspace A drops the three wells at 0.1 µM as outliers without a test, which moves its EC50 from 5.9 to 6.8 µM.',
      ],
      source: 'rationale',
    });
    const { user } = buildOptimizerPrompt(optimizerInput({ history: [comparison] }));
    expect(user).toContain(
      'Points against v1 (workspace A), found in the rationale (the verdict listed none):\n- Workspace A drops',
    );
  });

  it('are what the prompt and the checklist show, with the opponent’s shortcomings apart', () => {
    const lost = comparisonFrom('interval', 'A');
    const { user } = buildOptimizerPrompt(optimizerInput({ history: [lost] }));
    expect(user).toContain(
      `The judge's points against v1 (workspace A):\n- ${LISTED_VERDICTS.interval.against_A[0]}\n- ${LISTED_VERDICTS.interval.against_A[1]}`,
    );
    expect(user).not.toContain('against v0, where it fell short');
    const won = comparisonFrom('decisive', 'B');
    const prompt = buildOptimizerPrompt(optimizerInput({ history: [won] })).user;
    expect(prompt).toContain("The judge's points against v1 (workspace B):\n(none)");
    expect(prompt).toContain(
      "The judge's points against v0, where it fell short:\n- Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.",
    );
    // The interval missing from results.json twice reaches the checklist through the judge's lists (the cue words
    // found nothing against A in this rationale).
    const twice = [
      lost,
      { ...comparisonFrom('interval', 'A'), candidate: { label: 'v2', design: designWithCritic() } },
    ];
    expect(recurringProblems(twice).map((problem) => problem.text)).toContainEqual(
      expect.stringMatching(/^"results\.json" was reported missing or incomplete in 2 comparisons \(1, 2\)/),
    );
  });
});
