import type { Verdict } from '../records/verdict.js';
import { actionableSentences } from './actionable-sentences.js';
import type { PairwiseComparison } from '../records/optimizer-history.js';

/**
 * What the judge held against one side of a comparison. The judge's verdict lists its points against each workspace
 * (`against_A`, `against_B`), read here in the optimizer's terms; for a verdict without those lists (a judge that
 * left them out, a record written before they were asked for), the candidate's points are found in the rationale by
 * cue words (`actionableSentences`), read with the candidate's A/B position.
 */

export interface ComparisonPoints {
  points: string[];
  /** `judge`: every order's verdict listed them; `rationale`: none did, so they were found by cue words; `mixed`. */
  source: 'judge' | 'rationale' | 'mixed';
}

/** Points kept per comparison and side (default 8). */
const DEFAULT_LIMIT = 8;
const MAX_POINT_CHARACTERS = 320;

export function comparisonPoints(
  comparison: PairwiseComparison,
  side: 'candidate' | 'opponent' = 'candidate',
  limit = DEFAULT_LIMIT,
): ComparisonPoints {
  const readings = comparison.orders?.length ? comparison.orders : [comparison];
  let listed = 0;
  const points = readings.flatMap((reading) => {
    const list = side === 'candidate' ? reading.pointsAgainstCandidate : reading.pointsAgainstOpponent;
    if (list) {
      listed++;
      return list;
    }
    // The cue words read what the rationale holds against the candidate; the opponent's come from the lists alone.
    if (side === 'opponent') return [];
    return actionableSentences(reading.rationale, { candidate: reading.candidatePosition, limit });
  });
  const unique = [...new Map(points.map((point) => [point.toLowerCase(), clip(point)])).values()];
  return {
    points: unique.slice(0, limit),
    source: listed === readings.length ? 'judge' : listed === 0 ? 'rationale' : 'mixed',
  };
}

/**
 * A verdict's lists of points against each workspace, in the optimizer's terms, given the workspace the candidate was
 * shown as; none when the verdict gave no lists (the candidate's points are then found in the rationale).
 */
export function verdictPoints(
  verdict: Verdict,
  candidatePosition: 'A' | 'B',
): Pick<PairwiseComparison, 'pointsAgainstCandidate' | 'pointsAgainstOpponent'> {
  const [candidate, opponent] =
    candidatePosition === 'A'
      ? [verdict.against_A, verdict.against_B]
      : [verdict.against_B, verdict.against_A];
  return {
    ...(candidate ? { pointsAgainstCandidate: candidate } : {}),
    ...(opponent ? { pointsAgainstOpponent: opponent } : {}),
  };
}

/** The candidate's points of one comparison: what it should fix. */
export function comparisonActionablePoints(comparison: PairwiseComparison, limit = DEFAULT_LIMIT): string[] {
  return comparisonPoints(comparison, 'candidate', limit).points;
}

function clip(point: string): string {
  return point.length > MAX_POINT_CHARACTERS ? `${point.slice(0, MAX_POINT_CHARACTERS - 1)}…` : point;
}
