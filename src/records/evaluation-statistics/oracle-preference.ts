import type { PairOutcome } from './inputs.js';

/**
 * The oracle's preference between two graded episodes, from the first's view: the higher grade
 * wins, and grades within `tieMargin` points of each other (inclusive) are a tie.
 */
export function oraclePreference(firstGrade: number, secondGrade: number, tieMargin: number): PairOutcome {
  const difference = firstGrade - secondGrade;
  if (Math.abs(difference) <= tieMargin) return 'tie';
  return difference > 0 ? 'win' : 'loss';
}
