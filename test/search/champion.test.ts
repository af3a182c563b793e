import { describe, expect, it } from 'vitest';

import {
  beatsReference,
  decideChampion,
  initialChampionState,
  type ChampionRule,
  type Compare,
  type MatchResult,
} from '../../src/search/champion.js';

/** A judge with a fixed answer per ordered pair, recording what it was asked. */
function judge(answers: Record<string, MatchResult>): Compare & { asked: string[] } {
  const asked: string[] = [];
  const compare = (first: string, second: string) => {
    asked.push(`${first}-${second}`);
    const answer = answers[`${first}-${second}`];
    if (!answer) throw new Error(`unexpected match ${first}-${second}`);
    return Promise.resolve(answer);
  };
  return Object.assign(compare, { asked });
}

async function search(
  rule: ChampionRule,
  candidates: string[],
  answers: Record<string, MatchResult>,
  failed: string[] = [],
) {
  const compare = judge(answers);
  let state = initialChampionState('ref');
  const history = [];
  for (const id of candidates) {
    const decision = await decideChampion(rule, state, { id, failed: failed.includes(id) }, compare);
    state = decision.state;
    history.push(decision);
  }
  return { state, history, asked: compare.asked };
}

describe('champion rule "paper": each candidate meets the champion', () => {
  it('promotes winners, keeps the champion on a tie or a loss', async () => {
    const { state, asked } = await search('paper', ['v0', 'v1', 'v2', 'v3'], {
      'v0-ref': 'first',
      'v1-v0': 'tie',
      'v2-v0': 'second',
      'v3-v0': 'first',
    });
    expect(asked).toEqual(['v0-ref', 'v1-v0', 'v2-v0', 'v3-v0']);
    expect(state.championId).toBe('v3');
    expect(beatsReference(state)).toBe(true);
  });

  it('never beating the reference leaves it champion: the task gives no training data', async () => {
    const { state } = await search('paper', ['v0', 'v1'], { 'v0-ref': 'tie', 'v1-ref': 'second' });
    expect(state.championId).toBe('ref');
    expect(beatsReference(state)).toBe(false);
  });

  it('a failed episode loses by walkover without a judgment; a failed judgment decides nothing', async () => {
    const { state, history, asked } = await search('paper', ['v0', 'v1'], { 'v1-ref': 'failed' }, ['v0']);
    expect(asked).toEqual(['v1-ref']);
    expect(history[0]!.matches).toEqual([
      { first: 'v0', second: 'ref', purpose: 'candidate-vs-champion', result: 'walkover' },
    ]);
    expect(history[1]!.matches[0]!.result).toBe('failed');
    expect(state.championId).toBe('ref');
  });
});

describe('champion rule "official": each candidate meets the reference, then arbitration', () => {
  it('takes the first version that beats the reference without arbitration', async () => {
    const { state, asked } = await search('official', ['v0', 'v1'], {
      'v0-ref': 'second',
      'v1-ref': 'first',
    });
    expect(asked).toEqual(['v0-ref', 'v1-ref']);
    expect(state.championId).toBe('v1');
  });

  it('arbitrates between two versions that both beat the reference; a tie keeps the incumbent', async () => {
    const { state, history } = await search('official', ['v0', 'v1', 'v2'], {
      'v0-ref': 'first',
      'v1-ref': 'first',
      'v1-v0': 'tie',
      'v2-ref': 'first',
      'v2-v0': 'first',
    });
    expect(history[1]!.matches.map((match) => match.purpose)).toEqual([
      'candidate-vs-reference',
      'arbitration',
    ]);
    expect(history[1]!.promoted).toBe(false);
    expect(history[2]!.promoted).toBe(true);
    expect(state.championId).toBe('v2');
  });

  it('does not arbitrate for a version that loses to the reference, even when the champion would lose to it', async () => {
    const { state, asked } = await search('official', ['v0', 'v1'], { 'v0-ref': 'first', 'v1-ref': 'tie' });
    expect(asked).toEqual(['v0-ref', 'v1-ref']);
    expect(state.championId).toBe('v0');
  });
});
