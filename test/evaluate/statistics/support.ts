import type {
  GradedRollout,
  JudgedPair,
  PairOutcome,
} from '../../../src/records/evaluation-statistics/index.js';

/** A judgment with the fields a test does not care about filled in. */
export function judged(fields: Partial<JudgedPair> & { outcome: PairOutcome }): JudgedPair {
  return {
    task: 't1',
    condition: 'bare',
    replicate: 0,
    candidate: 'L1',
    baseline: 'L0',
    judge: 'external:x',
    seed: 0,
    order: 'candidate-first',
    ...fields,
  };
}

export function rollout(fields: Partial<GradedRollout>): GradedRollout {
  return {
    task: 't1',
    condition: 'bare',
    replicate: 0,
    generation: 'L0',
    grade: 50,
    outputTokens: 1000,
    delegations: 0,
    subagentThreads: 0,
    ...fields,
  };
}

/** Both orders of one pair by a judge that always prefers the episode shown first ("A"). */
export function alwaysFirst(fields: Partial<JudgedPair>): JudgedPair[] {
  return [
    judged({ ...fields, order: 'candidate-first', outcome: 'win' }),
    judged({ ...fields, order: 'baseline-first', outcome: 'loss' }),
  ];
}
