/**
 * Champion rules of the inner loop: which workflow version is the best so far for a task, by the model's own
 * pairwise judgments.
 *
 * - `paper`: each candidate meets the current champion (at first the bare-task reference run) and takes its place
 *   only by winning.
 * - `official`: each candidate meets the fixed reference; when it beats the reference and a version that also beat
 *   it is champion, the two meet in an arbitration match (the official code's documented deviation).
 *
 * Either way a tie keeps the incumbent, a candidate whose episode failed loses by walkover (nothing to judge), and a
 * judgment that failed (malformed past every repair) decides nothing: the incumbent stays, and the match says why.
 */

export type ChampionRule = 'paper' | 'official';

/** How a judged match ended, from the point of view of its `first` player. */
export type MatchResult = 'first' | 'second' | 'tie' | 'failed';

export interface SearchMatch {
  first: string;
  second: string;
  purpose: 'candidate-vs-champion' | 'candidate-vs-reference' | 'arbitration';
  /** `walkover`: the candidate's episode failed, so it lost without a judgment. */
  result: MatchResult | 'walkover';
}

export interface ChampionState {
  referenceId: string;
  /** The reference until some version wins its place. */
  championId: string;
}

export interface Candidate {
  id: string;
  /** The candidate's episode failed: it cannot be champion. */
  failed: boolean;
}

/** Judges one pair; `first` and `second` are ids, the order is the caller's (the judge randomises A/B itself). */
export type Compare = (first: string, second: string) => Promise<MatchResult>;

export interface ChampionDecision {
  state: ChampionState;
  matches: SearchMatch[];
  /** The candidate became champion. */
  promoted: boolean;
}

export function initialChampionState(referenceId: string): ChampionState {
  return { referenceId, championId: referenceId };
}

/** Whether the search has found a workflow its own judge prefers to the bare task. */
export function beatsReference(state: ChampionState): boolean {
  return state.championId !== state.referenceId;
}

export async function decideChampion(
  rule: ChampionRule,
  state: ChampionState,
  candidate: Candidate,
  compare: Compare,
): Promise<ChampionDecision> {
  const opponent = rule === 'paper' ? state.championId : state.referenceId;
  const purpose = rule === 'paper' ? 'candidate-vs-champion' : 'candidate-vs-reference';
  if (candidate.failed) {
    return {
      state,
      matches: [{ first: candidate.id, second: opponent, purpose, result: 'walkover' }],
      promoted: false,
    };
  }
  const result = await compare(candidate.id, opponent);
  const matches: SearchMatch[] = [{ first: candidate.id, second: opponent, purpose, result }];
  if (result !== 'first') return { state, matches, promoted: false };
  if (rule === 'paper' || !beatsReference(state)) {
    return { state: { ...state, championId: candidate.id }, matches, promoted: true };
  }
  const arbitration = await compare(candidate.id, state.championId);
  matches.push({
    first: candidate.id,
    second: state.championId,
    purpose: 'arbitration',
    result: arbitration,
  });
  if (arbitration !== 'first') return { state, matches, promoted: false };
  return { state: { ...state, championId: candidate.id }, matches, promoted: true };
}
