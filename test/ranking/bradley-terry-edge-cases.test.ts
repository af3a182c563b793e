import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { fitBradleyTerry, type Match } from '../../src/ranking/index.js';
import { newtonMap } from './support.js';

const beats = (winner: string, loser: string): Match => ({ a: winner, b: loser, winner: 'a' });
const ties = (one: string, other: string): Match => ({ a: one, b: other, winner: 'tie' });

describe('Bradley–Terry: ties', () => {
  it('scores a field of ties all equal, at the virtual player’s 0', () => {
    const fit = fitBradleyTerry([ties('a', 'b'), ties('b', 'c'), ties('c', 'a')]);
    for (const score of Object.values(fit.scores)) expect(Math.abs(score)).toBeLessThan(1e-12);
    expect(fit.ranking).toEqual(['a', 'b', 'c']);
  });

  it('counts a tie as half a win each way: two ties equal one win each', () => {
    const tied = fitBradleyTerry([ties('a', 'b'), ties('a', 'b'), beats('a', 'c')]);
    const split = fitBradleyTerry([beats('a', 'b'), beats('b', 'a'), beats('a', 'c')]);
    for (const id of ['a', 'b', 'c']) expect(tied.scores[id]).toBeCloseTo(split.scores[id]!, 10);
  });

  it('matches the independent fit with a mix of ties, wins and losses', () => {
    const matches = [
      ties('a', 'b'),
      beats('a', 'c'),
      beats('c', 'b'),
      ties('c', 'd'),
      beats('d', 'a'),
      beats('b', 'd'),
    ];
    const fit = fitBradleyTerry(matches, { prior: 0 });
    const reference = newtonMap(['a', 'b', 'c', 'd'], matches, 0);
    for (const id of ['a', 'b', 'c', 'd']) expect(fit.scores[id]).toBeCloseTo(reference.scores[id]!, 7);
  });
});

describe('Bradley–Terry: a player who never wins', () => {
  const matches = [
    beats('a', 'b'),
    beats('b', 'a'),
    beats('a', 'loser'),
    beats('b', 'loser'),
    beats('a', 'loser'),
  ];

  it('gets a finite, lowest score under the prior, equal to the independent fit', () => {
    const fit = fitBradleyTerry(matches);
    expect(fit.converged).toBe(true);
    expect(fit.ranking.at(-1)).toBe('loser');
    expect(Number.isFinite(fit.scores.loser)).toBe(true);
    expect(fit.scores.loser).toBeCloseTo(newtonMap(['a', 'b', 'loser'], matches, 0.5).scores.loser!, 7);
  });

  it('is refused with prior 0, naming the player', () => {
    expect(() => fitBradleyTerry(matches, { prior: 0 })).toThrow(UserError);
    expect(() => fitBradleyTerry(matches, { prior: 0 })).toThrow(
      /loser never won or tied a match.*log-strength −∞.*prior above 0/,
    );
  });

  it('is refused with prior 0 for a player who never lost, and for a group that won every match against the rest', () => {
    expect(() => fitBradleyTerry([beats('a', 'b'), beats('b', 'c'), beats('c', 'b')], { prior: 0 })).toThrow(
      /a never lost or tied a match/,
    );
    const group = [
      beats('a', 'b'),
      beats('b', 'a'),
      beats('c', 'd'),
      beats('d', 'c'),
      beats('a', 'c'),
      beats('b', 'd'),
    ];
    expect(() => fitBradleyTerry(group, { prior: 0 })).toThrow(
      /the players a, b won every match they played against c, d/,
    );
  });
});

describe('Bradley–Terry: a disconnected schedule', () => {
  const left = [beats('a', 'b'), beats('a', 'b'), beats('b', 'a'), beats('b', 'c'), ties('c', 'a')];
  const right = [beats('x', 'y'), beats('y', 'z'), beats('z', 'x'), beats('x', 'z')];

  it('under the prior, places each group against the virtual player exactly as if it were fitted alone', () => {
    const together = fitBradleyTerry([...left, ...right]);
    const alone = { ...fitBradleyTerry(left).scores, ...fitBradleyTerry(right).scores };
    for (const [id, score] of Object.entries(alone)) expect(together.scores[id]).toBeCloseTo(score, 9);
    expect(together.converged).toBe(true);
    const reference = newtonMap(['a', 'b', 'c', 'x', 'y', 'z'], [...left, ...right], 0.5);
    for (const [id, score] of Object.entries(reference.stderr))
      expect(together.stderr[id]).toBeCloseTo(score, 6);
  });

  it('scores a player without any match at the prior’s 0, with the prior’s standard error', () => {
    const fit = fitBradleyTerry(left, { players: ['a', 'b', 'c', 'idle'] });
    expect(fit.scores.idle).toBe(0);
    // Information from one virtual win and one virtual loss at p = 1: 2·0.5·1/4.
    expect(fit.stderr.idle).toBeCloseTo(2, 12);
  });

  it('is refused with prior 0, naming the groups', () => {
    expect(() => fitBradleyTerry([...left, ...right], { prior: 0 })).toThrow(
      /split the players into 2 groups that never met \(\{a, b, c\}, \{x, y, z\}\).*--prior 0\.5/,
    );
  });
});

describe('Bradley–Terry: options', () => {
  it('refuses a negative or non-finite prior', () => {
    expect(() => fitBradleyTerry([beats('a', 'b')], { prior: -1 })).toThrow(
      /prior -1: use a non-negative number/,
    );
    expect(() => fitBradleyTerry([beats('a', 'b')], { prior: Number.NaN })).toThrow(UserError);
  });

  it('refuses an empty input', () => {
    expect(() => fitBradleyTerry([])).toThrow(/no players to rank/);
  });

  it('keeps unusual ids as ordinary keys', () => {
    const fit = fitBradleyTerry([beats('__proto__', 'constructor')]);
    expect(Object.keys(fit.scores).sort()).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(fit)).ranking).toEqual(['__proto__', 'constructor']);
  });
});
