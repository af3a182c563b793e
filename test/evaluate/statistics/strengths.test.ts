import { describe, expect, it } from 'vitest';

import { generationStrengths, type JudgedPair } from '../../../src/records/evaluation-statistics/index.js';
import { newtonMap } from '../../ranking/support.js';
import { judged } from './support.js';

const bootstrap = { seed: 11, resamples: 200 };

/**
 * L1 beats L0 in 3 of 4 judgments of even replicates and 2 of 4 of odd ones (episode pairs differ, so resampling them
 * moves the fit), L2 beats L0 in 4 of 4 and L1 in 3 of 4, over replicates of two tasks.
 */
function judgments(): JudgedPair[] {
  const list: JudgedPair[] = [];
  for (const task of ['t1', 't2']) {
    for (let replicate = 0; replicate < 6; replicate++) {
      for (let seed = 0; seed < 4; seed++) {
        list.push(
          judged({
            task,
            replicate,
            seed,
            candidate: 'L1',
            baseline: 'L0',
            outcome: seed < 3 - (replicate % 2) ? 'win' : 'loss',
          }),
        );
        list.push(judged({ task, replicate, seed, candidate: 'L2', baseline: 'L0', outcome: 'win' }));
        list.push(
          judged({
            task,
            replicate,
            seed,
            candidate: 'L2',
            baseline: 'L1',
            outcome: seed === 0 ? 'tie' : 'win',
          }),
        );
      }
    }
  }
  return list;
}

describe('Bradley–Terry strengths of the generations', () => {
  it('are the maximum a posteriori log-strengths relative to the reference, as an independent Newton fit finds them', () => {
    const list = judgments();
    const strengths = generationStrengths('bare', list, 'L0', { ...bootstrap, resamples: 10 });
    const independent = newtonMap(
      ['L0', 'L1', 'L2'],
      list.map((judgment) => ({
        a: judgment.candidate,
        b: judgment.baseline,
        winner: judgment.outcome === 'win' ? 'a' : judgment.outcome === 'loss' ? 'b' : 'tie',
      })),
      0.5,
    ).scores;
    expect(strengths.reference).toBe('L0');
    expect(strengths.judgments).toBe(144);
    expect(strengths.generations.map((entry) => entry.generation)).toEqual(['L0', 'L1', 'L2']);
    const [l0, l1, l2] = strengths.generations;
    expect(l0!.score).toBe(0);
    expect(l1!.score).toBeCloseTo(independent.L1! - independent.L0!, 6);
    expect(l2!.score).toBeCloseTo(independent.L2! - independent.L0!, 6);
    expect(l2!.score).toBeGreaterThan(l1!.score);
  });

  it('have bootstrap intervals around the score, reproducible from the seed', () => {
    const strengths = generationStrengths('bare', judgments(), 'L0', bootstrap);
    const l1 = strengths.generations[1]!;
    expect(l1.interval!.lower).toBeLessThanOrEqual(l1.score);
    expect(l1.interval!.upper).toBeGreaterThanOrEqual(l1.score);
    expect(strengths.generations[2]!.interval!.lower).toBeGreaterThan(0);
    expect(generationStrengths('bare', judgments(), 'L0', bootstrap)).toEqual(strengths);
  });

  it('keep the fitted scale when the reference was not judged, and are empty without judgments', () => {
    const only = judgments().filter((judgment) => judgment.baseline === 'L1');
    const strengths = generationStrengths('bare', only, 'L0', bootstrap);
    expect(strengths.reference).toBeNull();
    expect(strengths.generations.map((entry) => entry.generation)).toEqual(['L1', 'L2']);
    expect(generationStrengths('bare', [], 'L0', bootstrap)).toEqual({
      condition: 'bare',
      reference: null,
      judgments: 0,
      generations: [],
    });
  });
});
