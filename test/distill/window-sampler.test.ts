import { describe, expect, it } from 'vitest';

import { drawProbabilities, sampleWindows, type SampleableWindow } from '../../src/distill/index.js';

const windows: SampleableWindow[] = [
  { task: 'a', role: 'orchestrator', supervisedTokens: 100 },
  { task: 'a', role: 'subagent', supervisedTokens: 7 },
  { task: 'a', role: 'subagent', supervisedTokens: 13 },
  { task: 'a', role: 'auxiliary', supervisedTokens: 2 },
  { task: 'b', role: 'orchestrator', supervisedTokens: 50 },
  { task: 'b', role: 'orchestrator', supervisedTokens: 70 },
  { task: 'b', role: 'subagent', supervisedTokens: 1 },
  // A task with orchestrator windows only draws them whatever the probability.
  { task: 'c', role: 'orchestrator', supervisedTokens: 33 },
];

/**
 * Every sequence of `draws` outcomes of the sampler's three choices (task, pool, window), each with its
 * probability, enumerated: the expected supervised tokens without any formula of the sampler's own.
 */
function bruteForceExpected(orchestratorProbability: number, draws: number): number {
  const tasks = [...new Set(windows.map((window) => window.task))];
  const outcomes: Array<{ probability: number; tokens: number }> = [];
  for (const task of tasks) {
    const orchestrator = windows.filter((window) => window.task === task && window.role === 'orchestrator');
    const others = windows.filter((window) => window.task === task && window.role !== 'orchestrator');
    for (const [pool, chance] of [
      [orchestrator, others.length === 0 ? 1 : orchestrator.length === 0 ? 0 : orchestratorProbability],
      [others, others.length === 0 ? 0 : orchestrator.length === 0 ? 1 : 1 - orchestratorProbability],
    ] as const) {
      for (const window of pool) {
        outcomes.push({ probability: chance / tasks.length / pool.length, tokens: window.supervisedTokens });
      }
    }
  }
  let expected = 0;
  const visit = (depth: number, probability: number, tokens: number): void => {
    if (depth === draws) {
      expected += probability * tokens;
      return;
    }
    for (const outcome of outcomes)
      visit(depth + 1, probability * outcome.probability, tokens + outcome.tokens);
  };
  visit(0, 1, 0);
  return expected;
}

describe('the window sampler', () => {
  it.each([1 / 3, 0.5, 0, 1])(
    'computes the processed supervised tokens exactly (orchestrator probability %s), as a brute-force count does',
    (orchestratorProbability) => {
      const plan = sampleWindows(windows, { steps: 2, batchSize: 2, seed: 1, orchestratorProbability });
      expect(plan.expectedProcessedSupervisedTokens).toBeCloseTo(
        bruteForceExpected(orchestratorProbability, 4),
        9,
      );
      const probabilities = drawProbabilities(windows, orchestratorProbability);
      expect([...probabilities].reduce((sum, probability) => sum + probability, 0)).toBeCloseTo(1, 12);
    },
  );

  it('counts the realised tokens of the draws it made, reproducibly from the seed', () => {
    const options = { steps: 40, batchSize: 4, seed: 7 };
    const plan = sampleWindows(windows, options);
    expect(plan.draws).toHaveLength(160);
    expect(plan.processedSupervisedTokens).toBe(
      [...plan.draws].reduce((sum, index) => sum + windows[index]!.supervisedTokens, 0),
    );
    expect(sampleWindows(windows, options).draws).toEqual(plan.draws);
    expect(sampleWindows(windows, { ...options, seed: 8 }).draws).not.toEqual(plan.draws);
    expect(plan.storedSupervisedTokens).toBe(276);
  });

  it('draws tasks uniformly and the orchestrator a third of the time, with replacement', () => {
    const plan = sampleWindows(windows, { steps: 30_000, batchSize: 1, seed: 3 });
    const share = (predicate: (window: SampleableWindow) => boolean) =>
      [...plan.draws].filter((index) => predicate(windows[index]!)).length / plan.draws.length;
    for (const task of ['a', 'b', 'c']) expect(share((window) => window.task === task)).toBeCloseTo(1 / 3, 1);
    const taskA = [...plan.draws].filter((index) => windows[index]!.task === 'a');
    expect(
      taskA.filter((index) => windows[index]!.role === 'orchestrator').length / taskA.length,
    ).toBeCloseTo(1 / 3, 1);
    expect(plan.processedSupervisedTokens / plan.expectedProcessedSupervisedTokens).toBeCloseTo(1, 1);
  });

  it('refuses what it cannot sample', () => {
    expect(() => sampleWindows([], { steps: 1, batchSize: 1, seed: 0 })).toThrow(/no windows/);
    expect(() => sampleWindows(windows, { steps: 0, batchSize: 1, seed: 0 })).toThrow(/steps 0/);
    expect(() =>
      sampleWindows(windows, { steps: 1, batchSize: 1, seed: 0, orchestratorProbability: 2 }),
    ).toThrow(/from 0 to 1/);
  });
});
