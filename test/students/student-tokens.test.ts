import { describe, expect, it } from 'vitest';

import type { SampleableWindow } from '../../src/distill/window-sampler.js';
import {
  studentSteps,
  studentTrainingPlan,
  type StudentTraining,
} from '../../src/students/student-tokens.js';

const windows: SampleableWindow[] = [
  { task: 'a', role: 'orchestrator', supervisedTokens: 100 },
  { task: 'a', role: 'subagent', supervisedTokens: 10 },
  { task: 'b', role: 'orchestrator', supervisedTokens: 1_000 },
];

const studentTokens = (
  list: readonly SampleableWindow[],
  training: StudentTraining,
  hyperparameters?: Parameters<typeof studentTrainingPlan>[2],
) => studentTrainingPlan(list, training, hyperparameters).tokens;

describe('student token accounting', () => {
  it('gives every student about the same passes over its windows', () => {
    expect(studentSteps(3, { batchSize: 2, epochs: 1 })).toBe(2);
    expect(studentSteps(8, { batchSize: 4, epochs: 2 })).toBe(4);
    expect(studentSteps(1, { batchSize: 4, epochs: 0.5 })).toBe(1);
    expect(() => studentSteps(3, { batchSize: 2, epochs: 0 })).toThrow(/epochs 0/);
  });

  it('counts the processed supervised tokens of exactly the windows the sampler draws', () => {
    const tokens = studentTokens(windows, { batchSize: 2, epochs: 2, seed: 7 });
    expect(tokens).toMatchObject({ windows: 3, steps: 3, batchSize: 2, storedSupervisedTokens: 1_110 });
    // Six draws, each one of the windows: the count is a sum of six window sizes.
    const sizes = windows.map((window) => window.supervisedTokens);
    const reachable = new Set<number>([0]);
    for (let draw = 0; draw < 6; draw++) {
      const next = new Set<number>();
      for (const sum of reachable) for (const size of sizes) next.add(sum + size);
      reachable.clear();
      for (const sum of next) reachable.add(sum);
    }
    expect(reachable.has(tokens.processedSupervisedTokens)).toBe(true);
    // Task b is drawn half the time and has only its orchestrator window; task a's orchestrator a third of the time.
    const perDraw = 0.5 * 1_000 + 0.5 * (100 / 3 + (10 * 2) / 3);
    expect(tokens.expectedProcessedSupervisedTokens).toBeCloseTo(6 * perDraw, 9);
    // The same seed draws the same windows; another seed may not, but expects the same.
    expect(studentTokens(windows, { batchSize: 2, epochs: 2, seed: 7 })).toEqual(tokens);
    const other = studentTokens(windows, { batchSize: 2, epochs: 2, seed: 8 });
    expect(other.expectedProcessedSupervisedTokens).toBeCloseTo(tokens.expectedProcessedSupervisedTokens, 9);
  });

  it('processes each window once when one step draws them all from a single window pool', () => {
    const one = [{ task: 'a', role: 'orchestrator' as const, supervisedTokens: 42 }];
    expect(studentTokens(one, { batchSize: 3, epochs: 3, seed: 0 })).toMatchObject({
      steps: 1,
      storedSupervisedTokens: 42,
      processedSupervisedTokens: 126,
      expectedProcessedSupervisedTokens: 126,
    });
  });

  it('gives the trainer the settings the tokens were counted with, the run’s orchestrator probability among them', () => {
    const plan = studentTrainingPlan(
      windows,
      { batchSize: 2, epochs: 2, seed: 7 },
      { orchestratorProbability: 1, learningRate: 1e-4, steps: 999, batchSize: 9 },
    );
    expect(plan.hyper).toEqual({ orchestratorProbability: 1, learningRate: 1e-4, steps: 3, batchSize: 2 });
    // Always the orchestrator pool: task a gives its 100-token window, task b its 1,000-token one.
    expect(plan.tokens.expectedProcessedSupervisedTokens).toBeCloseTo(6 * (0.5 * 1_000 + 0.5 * 100), 9);
    // Without the setting, the recipe's default (1/3) on both sides.
    expect(
      studentTrainingPlan(windows, { batchSize: 2, epochs: 2, seed: 7 }).hyper.orchestratorProbability,
    ).toBe(1 / 3);
  });
});
